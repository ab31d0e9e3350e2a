// The one checked arithmetic for sizes computed from shapes a file declares (a model's inputs, an .npy
// header, a graph's values): an element count or byte size that overflows 64 bits, or that no machine
// could allocate, is refused with a line naming the tensor and its shape instead of wrapping around.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace inferbench {

// The most bytes one tensor, or a cell's inputs together, may take: more than any accelerator or host
// inferbench runs on holds, far less than what wraps a 64-bit size.
inline constexpr std::uint64_t kMaxTensorBytes = std::uint64_t{1} << 38;  // 256 GiB

// a * b and a + b, or nothing where the result does not fit in int64.
std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b);
std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b);

// The product of the dimensions (1 for a scalar), or nothing for a negative dimension or a product
// beyond int64.
std::optional<std::int64_t> checked_element_count(std::span<const std::int64_t> shape);
// Elements times the element size, or nothing where the count has none or the bytes exceed kMaxTensorBytes.
std::optional<std::uint64_t> checked_byte_size(std::span<const std::int64_t> shape, std::size_t element_size);

// "[1, 3, 224, 224]": a shape as the errors show it.
std::string shape_text(std::span<const std::int64_t> shape);

// The throwing forms, for the tensor `what` ("input x of model m.onnx"): a UserError saying its shape and
// that its size is out of range (more elements than a 64-bit count holds, or more than 256 GiB).
std::int64_t element_count_or_throw(std::string_view what, std::span<const std::int64_t> shape);
std::size_t byte_size_or_throw(std::string_view what, std::span<const std::int64_t> shape, std::size_t element_size);
// `total` plus `bytes` of the tensor `what`, refused where the sum exceeds kMaxTensorBytes.
std::size_t add_total_bytes_or_throw(std::string_view what, std::size_t total, std::size_t bytes);

}  // namespace inferbench
