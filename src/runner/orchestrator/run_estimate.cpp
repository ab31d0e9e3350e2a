#include "runner/orchestrator/run_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

namespace inferbench::runner {
namespace {

bool same_setup(const BenchmarkSpec& a, const BenchmarkSpec& b) {
    return a.model == b.model && a.backend == b.backend && a.device == b.device && a.precision == b.precision;
}

// The time a cell spends beside its measured phase: the finished cells' mean; before any, its warm-up.
double overhead_ns(const BenchmarkSpec& spec, std::span<const FinishedCell> finished) {
    double sum = 0;
    int counted = 0;
    for (const FinishedCell& cell : finished) {
        if (cell.measured_ns <= 0) continue;
        sum += static_cast<double>(std::max<std::int64_t>(cell.wall_ns - cell.measured_ns, 0));
        ++counted;
    }
    return counted > 0 ? sum / counted : static_cast<double>(spec.loop.warmup_ns);
}

// One query's time at the cell's batch, from the finished cell of its setup whose batch is nearest; nothing where
// none ran. Scaled in proportion to the batch, which overstates a larger batch's time a little (rarely more
// than batching saves), so the estimate errs long.
std::optional<double> query_ns(const BenchmarkSpec& spec, std::span<const FinishedCell> finished) {
    const FinishedCell* nearest = nullptr;
    for (const FinishedCell& cell : finished) {
        if (!same_setup(*cell.spec, spec) || cell.queries <= 0 || cell.measured_ns <= 0) continue;
        const auto distance = [&](const FinishedCell& c) { return std::abs(c.spec->batch_size - spec.batch_size); };
        if (!nearest || distance(cell) < distance(*nearest)) nearest = &cell;
    }
    if (!nearest) return std::nullopt;
    const double per_query = static_cast<double>(nearest->measured_ns) / static_cast<double>(nearest->queries);
    return per_query * static_cast<double>(spec.batch_size) / static_cast<double>(nearest->spec->batch_size);
}

// The measured phase: planned, or the time its minimum query count takes where that is longer.
double measure_ns(const BenchmarkSpec& spec, std::span<const FinishedCell> finished) {
    const LoopSettings& loop = spec.loop;
    const auto planned = static_cast<double>(measured_time_ns(spec.scenario, planned_measure_ns(loop)));
    if (loop.stop != StopCriterion::fixed) return planned;
    const auto min_queries = static_cast<double>(loop.min_iterations);
    switch (spec.scenario.scenario) {
        case Scenario::single_stream:
        case Scenario::multi_stream:
            if (const auto per_query = query_ns(spec, finished)) return std::max(planned, min_queries * *per_query);
            return planned;
        case Scenario::server:
            if (spec.scenario.find_peak) return planned;  // its rates are found as it runs
            return std::max(planned, min_queries * 1e9 / spec.scenario.target_qps);
        case Scenario::offline:
        case Scenario::concurrency: return planned;
    }
    return planned;
}

}  // namespace

std::int64_t estimate_cell_ns(const BenchmarkSpec& spec, std::span<const FinishedCell> finished) {
    return static_cast<std::int64_t>(std::min(overhead_ns(spec, finished) + measure_ns(spec, finished), 9e18));
}

}  // namespace inferbench::runner
