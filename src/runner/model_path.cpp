#include "runner/model_path.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/units.hpp"
#include "models/zoo.hpp"

namespace inferbench {

ResolvedModel resolve_model(const BenchmarkSpec& spec, const Capabilities& caps) {
    if (!caps.needs_model_file) return {};
    if (spec.model == "null") return {"", "the null model runs only on the null backend"};
    const auto formats = caps.model_formats;
    if (models::find_zoo_model(spec.model)) {
        if (caps.builds_zoo_models) return {spec.model, std::nullopt};
        if (std::find(formats.begin(), formats.end(), "onnx") == formats.end())
            return {"", fmt::format("backend {} does not read ONNX, the format zoo models are exported in; give a "
                                    "model file it reads ({})", spec.backend, join(formats, ", "))};
        return {models::export_onnx(spec.model, spec.model_cache_dir, spec.seed).string(), std::nullopt};
    }
    const std::string extension = std::filesystem::path(spec.model).extension().string();
    const std::string format = extension.empty() ? "" : extension.substr(1);
    if (std::find(formats.begin(), formats.end(), format) == formats.end())
        return {"", fmt::format("backend {} does not read .{} files; it reads: {}", spec.backend, format, join(formats, ", "))};
    return {spec.model, std::nullopt};
}

}  // namespace inferbench
