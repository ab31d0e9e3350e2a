#include "core/tensor_size.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace inferbench {

std::optional<std::int64_t> checked_mul(std::int64_t a, std::int64_t b) {
    std::int64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
    return product;
}

std::optional<std::int64_t> checked_add(std::int64_t a, std::int64_t b) {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
    return sum;
}

std::optional<std::int64_t> checked_element_count(std::span<const std::int64_t> shape) {
    if (std::ranges::any_of(shape, [](std::int64_t d) { return d < 0; })) return std::nullopt;
    if (std::ranges::find(shape, 0) != shape.end()) return 0;  // empty, however large the other dimensions
    std::int64_t count = 1;
    for (const std::int64_t d : shape) {
        const auto next = checked_mul(count, d);
        if (!next) return std::nullopt;
        count = *next;
    }
    return count;
}

std::optional<std::uint64_t> checked_byte_size(std::span<const std::int64_t> shape, std::size_t element_size) {
    const auto count = checked_element_count(shape);
    if (!count) return std::nullopt;
    const auto elements = static_cast<std::uint64_t>(*count);
    if (element_size != 0 && elements > kMaxTensorBytes / element_size) return std::nullopt;
    return elements * element_size;
}

std::string shape_text(std::span<const std::int64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

namespace {

[[noreturn]] void out_of_range(std::string_view what, std::span<const std::int64_t> shape, std::string_view why) {
    throw UserError(fmt::format("{} has shape {}: {}; the shape in the file is out of range (inferbench feeds at "
                                "most {} GiB per tensor and per cell)",
                                what, shape_text(shape), why, kMaxTensorBytes >> 30));
}

}  // namespace

std::int64_t element_count_or_throw(std::string_view what, std::span<const std::int64_t> shape) {
    for (const std::int64_t d : shape)
        if (d < 0) out_of_range(what, shape, "a dimension is negative");
    const auto count = checked_element_count(shape);
    if (!count) out_of_range(what, shape, "its element count overflows a 64-bit integer");
    return *count;
}

std::size_t byte_size_or_throw(std::string_view what, std::span<const std::int64_t> shape, std::size_t element_size) {
    const std::int64_t count = element_count_or_throw(what, shape);
    const auto bytes = checked_byte_size(shape, element_size);
    if (!bytes)
        out_of_range(what, shape, fmt::format("{} elements of {} bytes are more than {} bytes", count, element_size,
                                              kMaxTensorBytes));
    return static_cast<std::size_t>(*bytes);
}

std::size_t add_total_bytes_or_throw(std::string_view what, std::size_t total, std::size_t bytes) {
    if (bytes > kMaxTensorBytes || total > kMaxTensorBytes - bytes)
        throw UserError(fmt::format("{} brings the inputs to more than {} GiB together ({} + {} bytes); the shapes in "
                                    "the file are out of range",
                                    what, kMaxTensorBytes >> 30, total, bytes));
    return total + bytes;
}

}  // namespace inferbench
