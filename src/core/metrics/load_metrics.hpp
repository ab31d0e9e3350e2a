// Names of the figures a backend stores about how it loaded the model (benchmark_metrics rows): the
// ahead-of-time compile counted in the load time (torch-aoti's package) and whether it came from the
// cache, and a CUDA graph that was asked for but could not be captured, so that the summary says why a
// load took minutes, or seconds, and what the measured loop replayed.
#pragma once

#include <string_view>

namespace inferbench::load_metrics {

// Seconds the compile took (unit "s"); on a cache hit, the lookup alone. Part of the stored load time.
inline constexpr std::string_view kCompileSeconds = "compile_seconds";
// 1: the compiled file came from the cache (made by an earlier benchmark); 0: compiled for this one (unit "bool").
inline constexpr std::string_view kCompileCacheHit = "compile_cache_hit";
// 1: cuda_graph was asked for, capture failed, and the loop ran the model without a graph (unit "bool").
inline constexpr std::string_view kCudaGraphFallback = "cuda_graph_fallback";

// torch.compile's counts by its first call, as the torch-compile runner (runners/torch_runner.py) stores them (unit
// "count"): the graphs it compiled, the graph breaks between them, and the CUDA graphs reduce-overhead skipped.
inline constexpr std::string_view kTorchCompileGraphs = "torch_compile_graphs";
inline constexpr std::string_view kTorchCompileGraphBreaks = "torch_compile_graph_breaks";
inline constexpr std::string_view kTorchCompileCudagraphSkips = "torch_compile_cudagraph_skips";

constexpr bool is_load_metric(std::string_view name) {
    return name == kCompileSeconds || name == kCompileCacheHit || name == kCudaGraphFallback;
}

}  // namespace inferbench::load_metrics
