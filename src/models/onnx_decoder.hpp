// A Llama-architecture decoder as ONNX, with the KV cache as inputs and outputs, in the interface Hugging Face
// optimum exports decoders with:
//   inputs  input_ids [batch, sequence] int64, attention_mask [batch, past + sequence] int64,
//           position_ids [batch, sequence] int64, past_key_values.{i}.key / .value [batch, kv_heads, past, head_dim]
//   outputs logits [batch, sequence, vocab], present.{i}.key / .value [batch, kv_heads, past + sequence, head_dim]
// Standard ONNX ops only (opset 17, no contrib ops), so that ONNX Runtime and the LibTorch interpreter run the same
// file. The weights are models/decoder_weights' (Hugging Face names and [out, in] layout, read by Gemm with
// transB = 1), so the same seed gives the same greedy tokens on every engine at fp32.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/generation.hpp"
#include "core/spec.hpp"
#include "models/onnx_builder.hpp"

namespace inferbench::models {

inline constexpr std::int64_t kDecoderOpsetVersion = 17;
// Above this many bytes of weights the writer puts them in MODEL.onnx.data (ONNX external data): a protobuf
// message cannot exceed 2 GiB.
inline constexpr std::int64_t kDecoderInlineWeightLimit = std::int64_t{1800} << 20U;

// The decoder's graph; fp32 or fp16 (weights, KV cache, logits and compute; RMSNorm and softmax in fp32, as
// Hugging Face computes them). The weights are made when the graph is written, one tensor at a time.
// Throws UserError for another precision or a shape shape_problem() refuses.
GraphBuilder build_llama_onnx(const DecoderShape& shape, std::uint64_t seed, Precision precision);

// Writes build_llama_onnx() to `path` (and `path` + ".data" beyond kDecoderInlineWeightLimit), complete or
// absent, holding one weight tensor in memory at a time. The model's metadata_props carry the shape.
// `inline_limit`: the weight bytes above which they go to the data file (tests lower it).
void write_llama_onnx(const DecoderShape& shape, std::uint64_t seed, Precision precision,
                      const std::filesystem::path& path, std::int64_t inline_limit = kDecoderInlineWeightLimit);

// The name of the external data file write_llama_onnx() writes beside `path` where it needs one.
std::string onnx_decoder_data_name(const std::filesystem::path& path);

// The shape of an ONNX decoder: from the metadata our writer stores, else from a user's export (layers, kv_heads
// and head_dim from its past_key_values inputs; vocabulary, width, heads, SwiGLU width and tying from its Hugging
// Face-named weights; the context limit, rotary theta and RMS epsilon, which the file does not say, left at
// kMaxGenerationTokens and DecoderShape's defaults). Reads the graph's description only, never the weights.
// Throws UserError naming the file for a file that is not ONNX, has no past_key_values inputs, or whose shape
// cannot be read.
DecoderShape decoder_shape_from_onnx(const std::filesystem::path& path);

// The rotary tables' names start with this: constants the writer adds, of which a step reads a row.
inline constexpr std::string_view kRotaryTablePrefix = "rotary.";

// The bytes of an ONNX decoder's weights as the file stores them: every initializer of one dimension or more but
// the writer's rotary tables (scalars are constants). Reads the graph's description only.
std::int64_t decoder_weight_bytes_from_onnx(const std::filesystem::path& path);

}  // namespace inferbench::models
