// Decoder language models: the zoo's Llama-architecture shapes (seeded random weights, written by
// inferbench in the form each engine reads: models/gguf_writer, models/onnx_decoder, models/hf_folder), and
// which of a plan's model entries are decoders.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/generation.hpp"

namespace inferbench::models {

struct DecoderModel {
    std::string name;
    std::string description;
    DecoderShape shape;
    std::int64_t published_parameters = 0;  // the model card's figure, rounded as published (0: none)
};

// llama-tiny (a few million parameters, for tests), llama-3.2-1b, llama-3.1-8b: the published
// configurations' shapes. Rotary embeddings without the Llama 3.1 frequency scaling (random weights do
// not depend on it; the cost of a step does not change).
const std::vector<DecoderModel>& decoder_models();
const DecoderModel* find_decoder_model(std::string_view name);  // nullptr if unknown
std::vector<std::string> decoder_model_names();

// Whether a plan's model entry is a decoder: a zoo decoder name, a .gguf file, a folder holding a Hugging Face
// config.json, an ONNX file whose graph takes past key/values (inputs named past_key_values.* or past.*), or a
// model a server serves (served:NAME, the openai backend's).
// Reads no more than an ONNX graph's signature; false for what cannot be read (the run reports that).
bool is_decoder_model(std::string_view model);

// The file or folder name a zoo decoder is written under in the model cache: the name, the seed and the
// form ("llama-tiny-s42-q8_0.v2.gguf"), so that every engine reads the same seeded weights.
std::filesystem::path decoder_cache_path(const std::filesystem::path& cache_dir, std::string_view name,
                                         std::uint64_t seed, std::string_view form);

}  // namespace inferbench::models
