#include "backends/random_inputs.hpp"

#include <bit>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "core/splitmix64.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {
namespace {

std::uint16_t to_bf16(float value) { return static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(value) >> 16); }

std::uint16_t to_f16(float value) {
    // Inputs lie in [-1, 1), so there is no overflow; small values flush to zero.
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t sign = (bits >> 16) & 0x8000u;
    const int exponent = static_cast<int>((bits >> 23) & 0xFFu) - 127 + 15;
    if (exponent <= 0) return static_cast<std::uint16_t>(sign);
    const std::uint32_t mantissa = (bits >> 13) & 0x3FFu;
    return static_cast<std::uint16_t>(sign | (static_cast<std::uint32_t>(exponent) << 10) | mantissa);
}

bool contains(std::string_view name, std::string_view part) { return name.find(part) != std::string_view::npos; }

std::int64_t integer_value(std::string_view name, SplitMix64& rng) {
    if (contains(name, "mask")) return 1;
    if (contains(name, "type") || contains(name, "segment")) return static_cast<std::int64_t>(rng.next() % 2);
    return static_cast<std::int64_t>(rng.next() % 1000);
}

template <typename T>
void put(std::byte* data, std::int64_t index, T value) {
    std::memcpy(data + static_cast<std::size_t>(index) * sizeof(T), &value, sizeof(T));
}

void fill(HostTensor& tensor, SplitMix64& rng) {
    std::byte* data = tensor.data.data();
    const std::int64_t n = tensor.info.element_count();
    const std::string_view name = tensor.info.name;
    for (std::int64_t i = 0; i < n; ++i) {
        switch (tensor.info.dtype) {
            case DType::f32: put(data, i, rng.next_signed_unit()); break;
            case DType::f64: put(data, i, static_cast<double>(rng.next_signed_unit())); break;
            case DType::f16: put(data, i, to_f16(rng.next_signed_unit())); break;
            case DType::bf16: put(data, i, to_bf16(rng.next_signed_unit())); break;
            case DType::i64: put(data, i, integer_value(name, rng)); break;
            case DType::i32: put(data, i, static_cast<std::int32_t>(integer_value(name, rng))); break;
            case DType::i8: put(data, i, static_cast<std::int8_t>(static_cast<int>(rng.next() % 256) - 128)); break;
            case DType::u8: put(data, i, static_cast<std::uint8_t>(rng.next() % 256)); break;
            case DType::boolean: put(data, i, static_cast<std::uint8_t>(rng.next() % 2)); break;
        }
    }
}

}  // namespace

std::size_t check_input_sizes(const std::vector<TensorInfo>& infos) {
    std::size_t total = 0;
    for (const auto& info : infos) total = add_total_bytes_or_throw(fmt::format("input {}", info.name), total, info.byte_size());
    return total;
}

std::vector<HostTensor> make_random_inputs(const std::vector<TensorInfo>& infos, std::uint64_t seed) {
    check_input_sizes(infos);
    std::vector<HostTensor> tensors;
    SplitMix64 rng(seed);
    for (const auto& info : infos) {
        HostTensor tensor{info, std::vector<std::byte>(info.byte_size())};
        fill(tensor, rng);
        tensors.push_back(std::move(tensor));
    }
    return tensors;
}

}  // namespace inferbench
