#include "findings/findings.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/time_units.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {

namespace {

using BenchmarkRule = std::vector<Finding> (*)(const BenchmarkEvidence&);

// The rules of one benchmark, in the order their findings are listed.
constexpr BenchmarkRule kBenchmarkRules[] = {
    &throttling,      &launch_bound,      &transfer_bound,       &instability,
    &not_converged,   &host_busy,         &cpu_limits,           &pre_post_processing,
    &layer_pitfalls,  &compile_fallbacks, &decode_bound,         &launch_bound_generation,
    &kv_cache_growth, &ttft_queueing,     &prefill_interference, &serving_errors,
    &pipeline_network_share, &pipeline_postprocess_cost};

}  // namespace

BenchmarkFindings benchmark_findings(const BenchmarkEvidence& evidence) {
    BenchmarkFindings found;
    for (const BenchmarkRule rule : kBenchmarkRules) found.by_rule.push_back(rule(evidence));
    return found;
}

std::vector<Finding> explain(std::span<const BenchmarkEvidence> evidence, std::span<const BenchmarkFindings> own) {
    std::vector<Finding> all;
    const auto add = [&](std::vector<Finding> found) {
        all.insert(all.end(), std::make_move_iterator(found.begin()), std::make_move_iterator(found.end()));
    };
    for (std::size_t rule = 0; rule < std::size(kBenchmarkRules); ++rule)
        for (const auto& found : own) add(found.by_rule.at(rule));
    add(precision_anomalies(evidence));
    add(batch_scaling(evidence));
    add(comparisons(evidence));
    add(repeat_spread(evidence));
    add(unmeasured_layer_times(evidence));
    add(generation_out_of_memory(evidence));
    add(serving_saturation(evidence));
    add(sweep_ttft_queueing(evidence));
    add(pipeline_gpu_preprocess(evidence));
    std::stable_sort(all.begin(), all.end(),
                     [](const Finding& a, const Finding& b) { return a.severity > b.severity; });
    return all;
}

std::vector<Finding> explain(std::span<const BenchmarkEvidence> evidence) {
    std::vector<BenchmarkFindings> own;
    own.reserve(evidence.size());
    for (const auto& e : evidence) own.push_back(benchmark_findings(e));
    return explain(evidence, own);
}

std::vector<Finding> explain(const store::ResultsStore& results, std::span<const store::BenchmarkRecord> benchmarks) {
    const auto catalog = devices::load_catalog();
    const auto runs = results.runs();
    std::vector<BenchmarkEvidence> evidence;
    std::vector<BenchmarkFindings> own;
    for (const auto& b : benchmarks) {
        auto e = load_benchmark_evidence(results, b, runs, benchmarks, catalog);
        if (!e) continue;
        own.push_back(benchmark_findings(*e));
        release_rows(*e);
        evidence.push_back(std::move(*e));
    }
    return explain(evidence, own);
}

nlohmann::ordered_json to_json(const Finding& finding) {
    nlohmann::ordered_json evidence{{"series", finding.evidence.series}, {"layers", finding.evidence.layers}};
    if (!finding.evidence.events.empty()) evidence["events"] = finding.evidence.events;
    if (finding.evidence.window)
        evidence["window_ms"] = {ns_to_ms(finding.evidence.window->start_ns),
                                 ns_to_ms(finding.evidence.window->end_ns)};
    return {{"id", finding.id},
            {"severity", to_string(finding.severity)},
            {"benchmarks", finding.benchmarks},
            {"statement", finding.statement},
            {"evidence", evidence},
            {"try", finding.try_next}};
}

}  // namespace inferbench::findings
