// A decoder as a Hugging Face model folder: config.json (a LlamaForCausalLM configuration) and
// model.safetensors (the documented safetensors layout: an 8-byte little-endian header length, a JSON header
// naming each tensor's dtype, shape and byte range, then the raw little-endian data). What the PyTorch runners
// (runners/torch_generate.py: transformers built from the folder, no hub) read; a user's own folder of the
// same kind is described by read_hf_decoder_shape().
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "core/generation.hpp"
#include "core/spec.hpp"

namespace inferbench::models {

inline constexpr std::string_view kHfConfigFile = "config.json";
inline constexpr std::string_view kHfWeightsFile = "model.safetensors";

// Writes `dir` holding config.json and model.safetensors with models/decoder_weights' tensors of `shape` and
// `seed`, in F32 (fp32), F16 (fp16) or BF16 (bf16); other precisions are a UserError. Tensors are made and
// written one at a time (an 8 B model never needs all its weights in memory). Complete or absent: the folder
// is written beside `dir` under a staging name and renamed when whole; an existing `dir` is an
// EnvironmentError (nothing is replaced).
void write_llama_hf_folder(const DecoderShape& shape, std::uint64_t seed, Precision precision,
                           const std::filesystem::path& dir);

// config.json's text for `shape` (torch_dtype from `precision`): LlamaForCausalLM, no rope_scaling, no
// bos/eos/pad token ids (the generation benchmark ignores end-of-sequence, and a random model has none).
std::string llama_hf_config_json(const DecoderShape& shape, Precision precision);

// The shape of a Llama-style decoder's config.json text; `where` names the file in errors. A UserError of one
// line naming the file and the key for a config that is not a Llama decoder (model_type other than "llama"),
// a missing or mistyped key, or a shape core/generation's shape_problem() refuses.
DecoderShape parse_llama_hf_config(std::string_view json, std::string_view where);

// parse_llama_hf_config() of `folder`/config.json (or of the file itself when given one).
DecoderShape read_hf_decoder_shape(const std::filesystem::path& folder);

// float32 to bfloat16's bits, rounded to nearest even (NaN stays NaN).
std::uint16_t to_bf16(float value);

}  // namespace inferbench::models
