// How values are stored in GGUF tensors: float16, bfloat16 and ggml's 32-value blocks Q8_0 and Q4_0, and the
// row order of llama.cpp's rotary embeddings.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "models/gguf_writer.hpp"
#include "models/onnx_fp16.hpp"

namespace inferbench::models {
namespace {

constexpr std::int64_t kQ8Bytes = 2 + kGgufQuantBlock;      // float16 scale + 32 int8
constexpr std::int64_t kQ4Bytes = 2 + kGgufQuantBlock / 2;  // float16 scale + 32 nibbles

// Round to nearest, ties to even (NaN stays a quiet NaN).
std::uint16_t to_bf16(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16) | 0x40U);
    const std::uint32_t rounding = 0x7FFFU + ((bits >> 16) & 1U);
    return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

float from_bf16(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

void put_u16(std::uint8_t* out, std::uint16_t v) {
    out[0] = static_cast<std::uint8_t>(v & 0xFFU);
    out[1] = static_cast<std::uint8_t>(v >> 8);
}

std::uint16_t get_u16(const std::uint8_t* in) {
    return static_cast<std::uint16_t>(in[0] | (static_cast<unsigned>(in[1]) << 8));
}

void encode_q8_0_block(const float* x, std::uint8_t* out) {
    float amax = 0;
    for (std::int64_t j = 0; j < kGgufQuantBlock; ++j) amax = std::max(amax, std::fabs(x[j]));
    const float d = amax / 127.0F;
    const float id = d != 0.0F ? 1.0F / d : 0.0F;
    put_u16(out, onnx::to_fp16_clamped(d));
    for (std::int64_t j = 0; j < kGgufQuantBlock; ++j)
        out[2 + j] = static_cast<std::uint8_t>(static_cast<std::int8_t>(std::lround(x[j] * id)));
}

void encode_q4_0_block(const float* x, std::uint8_t* out) {
    float amax = 0;
    float extreme = 0;  // the value of largest magnitude, with its sign
    for (std::int64_t j = 0; j < kGgufQuantBlock; ++j) {
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            extreme = x[j];
        }
    }
    const float d = extreme / -8.0F;
    const float id = d != 0.0F ? 1.0F / d : 0.0F;
    put_u16(out, onnx::to_fp16_clamped(d));
    const auto nibble = [&](float v) { return static_cast<std::uint8_t>(std::min(15.0F, std::floor(v * id + 8.5F))); };
    constexpr std::int64_t half = kGgufQuantBlock / 2;
    for (std::int64_t j = 0; j < half; ++j)
        out[2 + j] = static_cast<std::uint8_t>(nibble(x[j]) | (nibble(x[j + half]) << 4));
}

void check_blocks(GgufType type, std::int64_t elements) {
    if ((type == GgufType::q8_0 || type == GgufType::q4_0) && elements % kGgufQuantBlock != 0)
        throw std::invalid_argument(fmt::format("{} values are not whole blocks of {}", elements, kGgufQuantBlock));
}

}  // namespace

std::int64_t gguf_type_bytes(GgufType type, std::int64_t elements) {
    check_blocks(type, elements);
    switch (type) {
        case GgufType::f32: return elements * 4;
        case GgufType::f16:
        case GgufType::bf16: return elements * 2;
        case GgufType::q8_0: return elements / kGgufQuantBlock * kQ8Bytes;
        case GgufType::q4_0: return elements / kGgufQuantBlock * kQ4Bytes;
    }
    throw std::invalid_argument("unknown GGUF type");
}

std::vector<std::uint8_t> gguf_encode(std::span<const float> values, GgufType type) {
    const auto n = static_cast<std::int64_t>(values.size());
    std::vector<std::uint8_t> out(static_cast<std::size_t>(gguf_type_bytes(type, n)));
    const float* x = values.data();
    switch (type) {
        case GgufType::f32: std::memcpy(out.data(), x, out.size()); break;
        case GgufType::f16:
            for (std::int64_t i = 0; i < n; ++i) put_u16(&out[static_cast<std::size_t>(2 * i)], onnx::to_fp16_clamped(x[i]));
            break;
        case GgufType::bf16:
            for (std::int64_t i = 0; i < n; ++i) put_u16(&out[static_cast<std::size_t>(2 * i)], to_bf16(x[i]));
            break;
        case GgufType::q8_0:
            for (std::int64_t b = 0; b < n / kGgufQuantBlock; ++b)
                encode_q8_0_block(x + b * kGgufQuantBlock, &out[static_cast<std::size_t>(b * kQ8Bytes)]);
            break;
        case GgufType::q4_0:
            for (std::int64_t b = 0; b < n / kGgufQuantBlock; ++b)
                encode_q4_0_block(x + b * kGgufQuantBlock, &out[static_cast<std::size_t>(b * kQ4Bytes)]);
            break;
    }
    return out;
}

std::vector<float> gguf_decode(std::span<const std::uint8_t> bytes, GgufType type, std::int64_t elements) {
    if (static_cast<std::int64_t>(bytes.size()) != gguf_type_bytes(type, elements))
        throw std::invalid_argument(fmt::format("{} bytes do not hold {} values", bytes.size(), elements));
    std::vector<float> out(static_cast<std::size_t>(elements));
    const std::uint8_t* in = bytes.data();
    constexpr std::int64_t half = kGgufQuantBlock / 2;
    for (std::int64_t i = 0; i < elements; ++i) {
        const auto k = static_cast<std::size_t>(i);
        const std::int64_t block = i / kGgufQuantBlock;
        const std::int64_t j = i % kGgufQuantBlock;
        switch (type) {
            case GgufType::f32: std::memcpy(&out[k], in + 4 * i, 4); break;
            case GgufType::f16: out[k] = onnx::from_fp16(get_u16(in + 2 * i)); break;
            case GgufType::bf16: out[k] = from_bf16(get_u16(in + 2 * i)); break;
            case GgufType::q8_0: {
                const std::uint8_t* b = in + block * kQ8Bytes;
                out[k] = onnx::from_fp16(get_u16(b)) * static_cast<float>(static_cast<std::int8_t>(b[2 + j]));
                break;
            }
            case GgufType::q4_0: {
                const std::uint8_t* b = in + block * kQ4Bytes;
                const int q = j < half ? (b[2 + j] & 0x0F) : (b[2 + j - half] >> 4);
                out[k] = onnx::from_fp16(get_u16(b)) * static_cast<float>(q - 8);
                break;
            }
        }
    }
    return out;
}

std::vector<float> interleave_rotary_rows(std::span<const float> weight, std::int64_t heads, std::int64_t head_dim) {
    const auto rows = heads * head_dim;
    if (rows == 0 || head_dim % 2 != 0 || static_cast<std::int64_t>(weight.size()) % rows != 0)
        throw std::invalid_argument(fmt::format("cannot reorder {} values as {} heads of {} rows", weight.size(),
                                                heads, head_dim));
    const auto cols = static_cast<std::int64_t>(weight.size()) / rows;
    const std::int64_t half = head_dim / 2;
    std::vector<float> out(weight.size());
    for (std::int64_t h = 0; h < heads; ++h) {
        for (std::int64_t i = 0; i < half; ++i) {
            for (std::int64_t pair = 0; pair < 2; ++pair) {
                const std::int64_t from = h * head_dim + pair * half + i;  // rotate_half: i with i + half
                const std::int64_t to = h * head_dim + 2 * i + pair;       // adjacent: 2i with 2i + 1
                std::copy_n(weight.begin() + from * cols, cols, out.begin() + to * cols);
            }
        }
    }
    return out;
}

}  // namespace inferbench::models
