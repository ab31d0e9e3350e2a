#include "core/matrix.hpp"

#include <algorithm>

#include "core/settings.hpp"

namespace inferbench {
namespace {

BenchmarkSpec spec_with_settings(const Plan& plan) {
    const RunSettings& s = plan.settings;
    BenchmarkSpec spec;
    spec.warmup_ns = s.warmup_ns;
    spec.warmup_iterations = s.warmup_iterations;
    spec.duration_ns = s.duration_ns;
    spec.min_iterations = s.min_iterations;
    spec.max_iterations = s.max_iterations;
    spec.timeout_ns = s.timeout_ns;
    spec.seed = static_cast<std::uint64_t>(s.seed);
    spec.model_cache_dir = resolved_model_cache(s);
    return spec;
}

}  // namespace

std::vector<BenchmarkSpec> expand_matrix(const Plan& plan) {
    std::vector<BenchmarkSpec> cells;
    const BenchmarkSpec base = spec_with_settings(plan);
    for (const auto& model : plan.models) {
        for (const auto& backend : plan.backends) {
            for (const auto& device : plan.devices) {
                for (const auto& precision : plan.precisions) {
                    for (const auto batch : plan.batch_sizes) {
                        BenchmarkSpec spec = base;
                        spec.model = model;
                        spec.backend = backend;
                        spec.device = parse_device(device).value_or(Device{});
                        spec.precision = parse_precision(precision).value_or(Precision::fp32);
                        spec.batch_size = batch;
                        if (auto it = plan.backend_options.find(backend); it != plan.backend_options.end())
                            spec.backend_options = it->second;
                        const bool excluded = std::any_of(plan.exclude.begin(), plan.exclude.end(),
                                                          [&](const ExcludeRule& r) { return r.matches(spec); });
                        if (!excluded) cells.push_back(std::move(spec));
                    }
                }
            }
        }
    }
    return cells;
}

}  // namespace inferbench
