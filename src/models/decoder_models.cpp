#include "models/decoder_models.hpp"

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "core/plan/model_spec.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench::models {

const std::vector<DecoderModel>& decoder_models() {
    static const std::vector<DecoderModel> models = {
        {"llama-tiny", "Llama-architecture decoder of 5.11 M parameters for tests (4 layers, width 256, GQA 8:2, untied head)",
         DecoderShape{.layers = 4, .hidden = 256, .heads = 8, .kv_heads = 2, .head_dim = 32, .intermediate = 768,
                      .vocab = 4096, .max_context = 4096, .tied_embeddings = false, .rope_theta = 10000.0, .rms_eps = 1e-5},
         0},
        {"llama-3.2-1b", "Llama 3.2 1B's shape (16 layers, width 2048, GQA 32:8, vocabulary 128,256, tied embeddings)",
         DecoderShape{.layers = 16, .hidden = 2048, .heads = 32, .kv_heads = 8, .head_dim = 64, .intermediate = 8192,
                      .vocab = 128256, .max_context = 131072, .tied_embeddings = true, .rope_theta = 500000.0,
                      .rms_eps = 1e-5},
         1'240'000'000},
        {"llama-3.1-8b", "Llama 3.1 8B's shape (32 layers, width 4096, GQA 32:8, vocabulary 128,256)",
         DecoderShape{.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 8, .head_dim = 128, .intermediate = 14336,
                      .vocab = 128256, .max_context = 131072, .tied_embeddings = false, .rope_theta = 500000.0,
                      .rms_eps = 1e-5},
         8'030'000'000},
    };
    return models;
}

const DecoderModel* find_decoder_model(std::string_view name) {
    const auto& models = decoder_models();
    const auto it = std::find_if(models.begin(), models.end(), [&](const DecoderModel& m) { return m.name == name; });
    return it == models.end() ? nullptr : &*it;
}

std::vector<std::string> decoder_model_names() {
    std::vector<std::string> names;
    for (const DecoderModel& m : decoder_models()) names.push_back(m.name);
    return names;
}

namespace {

bool onnx_takes_past(const std::filesystem::path& path) {
    try {
        const onnx::OnnxGraphSignature signature = onnx::read_onnx_signature(path);
        return std::any_of(signature.inputs.begin(), signature.inputs.end(), [](const onnx::OnnxValueInfo& input) {
            return input.name.starts_with("past_key_values.") || input.name.starts_with("past.");
        });
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace

bool is_decoder_model(std::string_view model) {
    if (find_decoder_model(model) || is_served_model(model)) return true;
    const std::filesystem::path path{std::string(model)};
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return std::filesystem::is_regular_file(path / "config.json", ec);
    if (!std::filesystem::is_regular_file(path, ec)) return false;
    const std::string extension = path.extension().string();
    if (extension == ".gguf") return true;
    return extension == ".onnx" && onnx_takes_past(path);
}

std::filesystem::path decoder_cache_path(const std::filesystem::path& cache_dir, std::string_view name,
                                         std::uint64_t seed, std::string_view form) {
    return cache_dir / fmt::format("{}-s{}-{}", name, seed, form);
}

}  // namespace inferbench::models
