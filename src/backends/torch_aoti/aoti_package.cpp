#include "backends/torch_aoti/aoti_package.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "backends/batch_shape.hpp"
#include "core/error.hpp"
#include "core/metrics/load_metrics.hpp"
#include "core/time_units.hpp"
#include "models/converted_model_cache.hpp"

namespace inferbench {
namespace {

constexpr std::int64_t kMaxReportMarginNs = 30'000'000'000;

}  // namespace

std::int64_t export_timeout_ns(std::int64_t benchmark_timeout_ns) {
    if (benchmark_timeout_ns <= 0) return 0;
    return benchmark_timeout_ns - std::min(benchmark_timeout_ns / 10, kMaxReportMarginNs);
}

std::filesystem::path export_cache_dir(const std::string& model_cache_dir) {
    return models::converted_model_dir(model_cache_dir) / "torch_export";
}

external::ExportRequest aoti_export_request(const std::string& model, const BenchmarkSpec& spec,
                                            const AotiOptions& options) {
    external::ExportRequest request;
    request.spec = model;
    request.format = external::ExportFormat::pt2;
    request.precision = spec.precision;
    if (!options.dynamic_batch) request.batch = spec.batch_size;
    request.device = spec.device;
    request.cache_dir = export_cache_dir(spec.model_cache_dir);
    request.seq_len = options.seq_len;
    request.options = options.export_options;
    return request;
}

ConvertedModel converted_package(const external::ExportOutcome& outcome) {
    ConvertedModel converted;
    if (!outcome.model) {
        converted.skip_reason = outcome.skip_reason;
        return converted;
    }
    const external::ExportedModel& model = *outcome.model;
    converted.model_path = model.path;
    converted.load_ns = std::llround(s_to_ns(model.seconds));
    converted.metrics = {{std::string(load_metrics::kCompileSeconds), model.seconds, "s"},
                         {std::string(load_metrics::kCompileCacheHit), model.cache_hit ? 1.0 : 0.0, "bool"}};
    return converted;
}

std::optional<std::string> version_problem(const external::ExportedModel& model, std::string_view libtorch_version,
                                           const std::string& python) {
    const std::string compiled_by = external::release_version(model.torch_version);
    const std::string runs_on = external::release_version(libtorch_version);
    if (compiled_by == runs_on) return std::nullopt;
    return fmt::format(
        "{} was compiled by PyTorch {} ({}), but this torch-aoti module runs LibTorch {}, and a package runs only on the "
        "version that compiled it; set backend_options.torch-aoti.python to the Python of PyTorch {}, or rebuild "
        "inferbench against PyTorch {}'s LibTorch (scripts/setup.sh picks the LibTorch of python3's PyTorch)",
        model.path, model.torch_version, python.empty() ? "python3" : python, libtorch_version, runs_on, compiled_by);
}

std::vector<TensorInfo> package_inputs(const external::ExportedModel& model, std::int64_t batch) {
    if (model.inputs.empty())
        throw UserError(fmt::format("{}: the exporter named no inputs for this package, so inferbench cannot feed it; "
                                    "let inferbench compile the model from its source (a zoo name or a spec)",
                                    model.path));
    std::vector<TensorInfo> inputs;
    for (const TensorInfo& declared : model.inputs) {
        TensorInfo& input = inputs.emplace_back(declared);
        input.shape = resolve_batch_shape(declared.shape, batch, model.path, declared.name);
    }
    return inputs;
}

BackendMetric cuda_graph_fallback_metric() { return {std::string(load_metrics::kCudaGraphFallback), 1.0, "bool"}; }

}  // namespace inferbench
