#include "runner/orchestrator/spec_export.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "backends/external/torch_exporter.hpp"
#include "core/error.hpp"

namespace inferbench::runner {

SpecExport export_model_spec(const BenchmarkSpec& spec, const std::string& format) {
    namespace ex = external;
    ex::ExportRequest request;
    request.spec = spec.model;
    request.format = format == "onnx" ? ex::ExportFormat::onnx : ex::ExportFormat::torchscript;
    request.precision = Precision::fp32;  // the backends convert precisions themselves
    if (request.format != ex::ExportFormat::onnx) request.batch = spec.batch_size;  // traced at the cell's batch
    request.device = Device{};
    request.cache_dir = std::filesystem::path(spec.model_cache_dir) / "torch_export";
    request.options = {fmt::format("seed={}", spec.seed)};
    SpecExport result;
    try {
        const ex::ExportOutcome outcome = ex::run_torch_export(request, {"", spec.timeout_ns, &result.output_tail});
        if (outcome.model) {
            result.model_path = outcome.model->path;
        } else {
            result.skip_reason = fmt::format("{} (making the {} file backend {} reads from {})", outcome.skip_reason,
                                             format, spec.backend, spec.model);
        }
    } catch (const std::exception& e) {  // UserError (bad input) or EnvironmentError (a failed export)
        result.failure = fmt::format("model export for backend {} failed: {}", spec.backend, e.what());
    }
    return result;
}

}  // namespace inferbench::runner
