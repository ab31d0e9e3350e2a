// How the torch-aoti backend gets the package it runs, SDK-free: the request to runners/torch_export.py for a
// cell (the model as the plan names it, the cell's precision, batch and device, the cache under the model
// cache), its time limit, and what the answer becomes: the file, its compile counted in the load time and
// stored with whether it came from the cache, or the reason the cell is skipped; then the checks a package
// must pass before it runs (the PyTorch that compiled it is this LibTorch's) and its inputs at the cell's batch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/external/torch_exporter.hpp"
#include "backends/torch_aoti/aoti_options.hpp"

namespace inferbench {

// The exporter's time limit: the benchmark's timeout less a margin to report a timeout in before the
// orchestrator ends the worker (a tenth of it, at most 30 s); 0 (no timeout) stays 0.
std::int64_t export_timeout_ns(std::int64_t benchmark_timeout_ns);

// Where packages are cached: <model cache>/converted/torch_export.
std::filesystem::path export_cache_dir(const std::string& model_cache_dir);

// The request for the cell's package: `model` as the plan names it (zoo name, spec) or the file's path.
external::ExportRequest aoti_export_request(const std::string& model, const BenchmarkSpec& spec,
                                            const AotiOptions& options);

// The exporter's answer as convert_model() returns it: the package, its compile (or cache lookup) as load
// time and as figures (load_metrics), or the skip reason.
ConvertedModel converted_package(const external::ExportOutcome& outcome);

// Why a package the exporter's PyTorch compiled cannot run on this LibTorch (a package runs only on the
// version that compiled it), or nothing. `python` is the backend's python option, for the fix.
std::optional<std::string> version_problem(const external::ExportedModel& model, std::string_view libtorch_version,
                                           const std::string& python);

// The package's inputs at `batch` (backends/batch_shape's rule); a package without inputs is a UserError.
std::vector<TensorInfo> package_inputs(const external::ExportedModel& model, std::int64_t batch);

// The figure saying a CUDA graph was asked for and could not be captured.
BackendMetric cuda_graph_fallback_metric();

}  // namespace inferbench
