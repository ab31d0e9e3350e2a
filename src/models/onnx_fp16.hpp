// Converts an ONNX model to float16 weights and compute, the way ONNX Runtime's own float16 converter
// does: every float32 tensor (initializers, Constant values, inputs, outputs, value_info, Cast targets,
// the dtype of generator ops) becomes float16, except around ops that are numerically sensitive or have
// no float16 kernels (the block list), which keep float32 with Cast nodes at their boundaries. Values
// beyond float16's range are clamped to its largest finite value, tiny non-zero ones to its smallest.
// Subgraphs (If, Loop, Scan) are converted too; tensors kept in external files are written inline.
// The model is rewritten at the wire level (onnx_wire.hpp): what is not converted is copied byte for byte.
#pragma once

#include <cstdint>
#include <filesystem>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/onnx_reader.hpp"

namespace inferbench::models::onnx {

struct Fp16Options {
    // The reduced type: float16, or bfloat16 (same rules, no clamping: bfloat16 has float32's range).
    DataType low_type = DataType::float16;
    // true: float32 graph inputs and outputs stay float32 (Casts right after the inputs and before the
    // outputs); false: they become float16 too.
    bool keep_io_types = false;
    std::set<std::string, std::less<>> op_block_list = default_fp16_block_list();

    static std::set<std::string, std::less<>> default_fp16_block_list();
};

// The converted ModelProto. Throws UserError naming the file when it cannot be read or the converted
// model would not fit one protobuf message (2 GiB), std::invalid_argument for a low_type other than the two.
std::string convert_to_fp16(const std::filesystem::path& model, const Fp16Options& options);

// Rounds to the nearest float16 (ties to even), clamped: |x| > 65504 to +-65504, 0 < |x| < 2^-24 to
// +-2^-24; NaN stays NaN. As IEEE binary16 bits.
std::uint16_t to_fp16_clamped(float value);
float from_fp16(std::uint16_t bits);
// Rounds to the nearest bfloat16 (ties to even; a value that rounds past the largest finite becomes
// infinity, as in any IEEE rounding); NaN stays a quiet NaN. As bfloat16 bits.
std::uint16_t to_bf16(float value);
float from_bf16(std::uint16_t bits);

}  // namespace inferbench::models::onnx
