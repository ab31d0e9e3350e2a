#include "analysis/summary.hpp"

#include "core/error.hpp"
#include "core/units.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

namespace inferbench::analysis {

namespace {

// A benchmark that hit max_iterations before its duration measured less time than asked for.
std::optional<std::string> cut_short_warning(const store::BenchmarkRecord& benchmark, std::int64_t count,
                                             std::int64_t wall_ns) {
    const auto settings = nlohmann::json::parse(benchmark.settings_json, nullptr, false);
    if (!settings.is_object()) return std::nullopt;
    const auto max_iterations = settings.value("max_iterations", std::int64_t{0});
    const auto duration_ns = settings.value("duration_ns", std::int64_t{0});
    if (max_iterations <= 0 || count < max_iterations || wall_ns >= duration_ns) return std::nullopt;
    return fmt::format("stopped at max_iterations ({}) after {}, before the {} duration; raise --max-iterations "
                       "(0: no limit) to measure longer",
                       max_iterations, format_latency(static_cast<double>(wall_ns)), format_duration(duration_ns));
}

}  // namespace

BenchmarkSummary summarize_benchmark(const store::BenchmarkRecord& benchmark,
                                     std::span<const IterationRecord> iterations) {
    BenchmarkSummary summary;
    summary.benchmark = benchmark;
    if (iterations.empty()) return summary;
    std::vector<std::int64_t> e2e;
    std::vector<std::int64_t> compute;
    e2e.reserve(iterations.size());
    for (const auto& it : iterations) {
        e2e.push_back(it.e2e_ns);
        if (it.compute_ns != kNotMeasured) compute.push_back(it.compute_ns);
    }
    summary.e2e = summarize(e2e);
    if (!compute.empty()) summary.compute = summarize(compute);
    const std::int64_t wall_ns = benchmark.measured_wall_ns.value_or(
        iterations.back().start_ns + iterations.back().e2e_ns - iterations.front().start_ns);
    summary.throughput_per_s = throughput_per_s(benchmark.batch_size, summary.e2e.count, wall_ns);
    summary.warnings = timing_warnings(summary.e2e);
    if (auto cut = cut_short_warning(benchmark, summary.e2e.count, wall_ns)) summary.warnings.push_back(*cut);
    return summary;
}

std::vector<BenchmarkSummary> summarize_run(const store::ResultsStore& results, std::optional<std::int64_t> run_id) {
    if (!run_id) {
        const auto latest = results.latest_run();
        if (!latest) throw UserError(fmt::format("{}: no runs stored yet; run `inferbench run` first", results.path().string()));
        run_id = latest->run_id;
    }
    std::vector<BenchmarkSummary> summaries;
    for (const auto& benchmark : results.benchmarks(run_id)) {
        const auto iterations = results.iterations(benchmark.benchmark_id);
        summaries.push_back(summarize_benchmark(benchmark, iterations));
    }
    if (summaries.empty() && !results.benchmarks(std::nullopt).empty()) {
        // An unknown run id: say which exist.
        throw UserError(fmt::format("{}: run {} has no benchmarks; list runs with `inferbench summary --runs`",
                                    results.path().string(), *run_id));
    }
    return summaries;
}

}  // namespace inferbench::analysis
