// A zoo decoder (models/decoder_models) written in the form an engine reads, into the model cache, once per
// name, seed, form and precision: GGUF (models/gguf_writer), ONNX with past key/values (models/onnx_decoder) or a
// Hugging Face folder (models/hf_folder). Every form holds the same seeded weights (models/decoder_weights).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "core/spec.hpp"
#include "models/decoder_models.hpp"

namespace inferbench::runner {

// The forms, in the order a backend's Capabilities::model_formats is searched for one: "gguf", "onnx", "hf".
inline constexpr std::string_view kDecoderForms[] = {"gguf", "onnx", "hf"};

// The file (or folder, for "hf") in cache_dir, written unless already there (complete or absent: a crash
// leaves no half file). Throws UserError for a precision the form cannot hold.
std::filesystem::path write_zoo_decoder(const models::DecoderModel& model, std::string_view form, Precision precision,
                                        const std::filesystem::path& cache_dir, std::uint64_t seed);

}  // namespace inferbench::runner
