#include "runner/orchestrator/model_path.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "backends/model_spec_support.hpp"
#include "backends/openai/openai_backend.hpp"
#include "core/plan/model_spec.hpp"
#include "core/units.hpp"
#include "runner/orchestrator/decoder_files.hpp"
#include "models/zoo.hpp"
#include "runner/orchestrator/spec_export.hpp"

namespace inferbench::runner {

namespace {

// A PyTorch model spec: as it is for a backend that builds models itself, else the ONNX (or TorchScript)
// file torch_export.py makes of it.
ResolvedModel resolve_spec(const BenchmarkSpec& spec, const Capabilities& caps) {
    if (caps.builds_zoo_models) return {spec.model, std::nullopt};
    if (auto refusal = model_spec_refusal(spec.backend, caps, spec)) return {"", refusal};
    SpecExport made = export_model_spec(spec, spec_export_format(caps));
    return {made.model_path, made.skip_reason, made.failure, made.output_tail};
}

// A zoo decoder: written in the first form the backend reads of GGUF, ONNX and a Hugging Face folder.
ResolvedModel resolve_decoder(const BenchmarkSpec& spec, const models::DecoderModel& decoder, const Capabilities& caps) {
    const auto& formats = caps.model_formats;
    for (const std::string_view form : kDecoderForms) {
        if (std::find(formats.begin(), formats.end(), form) == formats.end()) continue;
        return {write_zoo_decoder(decoder, form, spec.precision, spec.model_cache_dir, spec.seed).string(),
                std::nullopt};
    }
    return {"", fmt::format("backend {} reads none of the forms zoo decoders are written in (gguf, onnx, a Hugging "
                            "Face folder); it reads: {}",
                            spec.backend, join(formats, ", "))};
}

// A serving cell's model is what its server_command reads as {model}: a zoo decoder written as GGUF (what
// llama.cpp's server loads), a file or folder as it is; a served:NAME, or a cell whose server is already running,
// needs no file.
ResolvedModel resolve_served(const BenchmarkSpec& spec) {
    if (is_served_model(spec.model)) return {};
    if (read_serving_options(spec).server_command.find("{model}") == std::string::npos) return {};
    if (const models::DecoderModel* decoder = models::find_decoder_model(spec.model))
        return {write_zoo_decoder(*decoder, "gguf", spec.precision, spec.model_cache_dir, spec.seed).string(),
                std::nullopt};
    return {std::filesystem::absolute(spec.model).string(), std::nullopt};
}

}  // namespace

ResolvedModel resolve_model(const BenchmarkSpec& spec, const Capabilities& caps) {
    if (caps.serves_endpoint) return resolve_served(spec);
    if (!caps.needs_model_file) return {};
    if (spec.model == "null") return {"", "the null model runs only on the null backend"};
    if (is_model_spec(spec.model)) return resolve_spec(spec, caps);
    const auto formats = caps.model_formats;
    if (const models::DecoderModel* decoder = models::find_decoder_model(spec.model))
        return resolve_decoder(spec, *decoder, caps);
    if (models::find_zoo_model(spec.model)) {
        if (caps.builds_zoo_models) return {spec.model, std::nullopt};
        if (std::find(formats.begin(), formats.end(), "onnx") == formats.end())
            return {"", fmt::format("backend {} does not read ONNX, the format zoo models are exported in; give a "
                                    "model file it reads ({})", spec.backend, join(formats, ", "))};
        return {models::export_onnx(spec.model, spec.model_cache_dir, spec.seed).string(), std::nullopt};
    }
    const std::string extension = std::filesystem::path(spec.model).extension().string();
    // A folder (a Hugging Face model: config.json and safetensors) is the form "hf".
    std::error_code ec;
    const std::string format = std::filesystem::is_directory(spec.model, ec) ? "hf"
                               : extension.empty()                          ? ""
                                                                            : extension.substr(1);
    if (std::find(formats.begin(), formats.end(), format) == formats.end())
        return {"", fmt::format("backend {} does not read .{} files; it reads: {}", spec.backend, format, join(formats, ", "))};
    return {spec.model, std::nullopt};
}

}  // namespace inferbench::runner
