#include <algorithm>

#include <fmt/format.h>

#include "core/statistics/statistics.hpp"
#include "core/units.hpp"
#include "report/comparison.hpp"

namespace inferbench::report {
namespace {

using SettingText = std::string (*)(const analysis::BenchmarkSummary&);

std::string setting_text(const std::optional<std::int64_t>& value, bool duration) {
    if (!value) return "not recorded";
    return duration ? format_duration(*value) : std::to_string(*value);
}

template <std::optional<std::int64_t> analysis::CellSettings::*Field, bool kDuration>
std::string number_setting(const analysis::BenchmarkSummary& s) {
    return setting_text(s.settings.*Field, kDuration);
}

// Whether the cell shared the host with other devices' benchmarks (`parallel: per_device`): a GPU's figures
// measured beside other GPUs' work are not a measurement alone.
std::string concurrency_text(const analysis::BenchmarkSummary& s) {
    return s.benchmark.concurrent.empty() ? "alone" : "beside other devices' benchmarks";
}

// The settings a cell ran with, each as text: the loop's numbers, the measure conditions (core/plan/
// measure_conditions: throttle policy, L2 flush, sync ...), the stopping criterion with its own settings, the
// repeats a row stands for (a mean of 5 repeats against one run is a different measurement) and concurrency.
constexpr std::pair<const char*, SettingText> kSettings[] = {
    {"duration", number_setting<&analysis::CellSettings::duration_ns, true>},
    {"warm-up", number_setting<&analysis::CellSettings::warmup_ns, true>},
    {"warm-up iterations", number_setting<&analysis::CellSettings::warmup_iterations, false>},
    {"min iterations", number_setting<&analysis::CellSettings::min_iterations, false>},
    {"max iterations", number_setting<&analysis::CellSettings::max_iterations, false>},
    {"measure conditions",
     [](const analysis::BenchmarkSummary& s) {
         return s.settings.conditions ? describe(*s.settings.conditions) : std::string("not recorded");
     }},
    {"stopping criterion",
     [](const analysis::BenchmarkSummary& s) { return s.settings.stop.empty() ? "not recorded" : s.settings.stop; }},
    {"repeats", [](const analysis::BenchmarkSummary& s) { return std::to_string(s.repeats); }},
    {"concurrency", concurrency_text},
};

// The load scenario of a side: "single_stream", "server 1000 qps (p99 <= 15.00 ms)".
std::string scenario_label(const analysis::BenchmarkSummary& s) {
    return s.scenario.label.empty() ? std::string("not recorded") : s.scenario.label;
}

// "[1] a, [2] b" for a row whose sides' texts differ.
std::optional<std::string> differing_texts(const Comparison& comparison, const ComparisonRow& row, SettingText text_of) {
    std::vector<std::string> values;
    std::optional<std::string> first;
    bool differs = false;
    for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
        const auto* s = comparison.at(row, side);
        if (!s) continue;
        const std::string value = text_of(*s);
        if (first && *first != value) differs = true;
        if (!first) first = value;
        values.push_back(fmt::format("[{}] {}", side + 1, value));
    }
    if (!differs) return std::nullopt;
    return join(values, ", ");
}

// The side a row's settings are judged against: the baseline where it measured the row, else the first that did.
std::optional<std::size_t> reference_side(const Comparison& comparison, const ComparisonRow& row) {
    if (comparison.at(row, comparison.baseline)) return comparison.baseline;
    for (std::size_t side = 0; side < comparison.sides.size(); ++side)
        if (comparison.at(row, side)) return side;
    return std::nullopt;
}

void add(std::vector<std::pair<std::string, std::size_t>>& counted, std::string text) {
    auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == text; });
    if (it == counted.end()) counted.emplace_back(std::move(text), 1);
    else ++it->second;
}

// "[2] 3 benchmarks measured again in later runs (3, 5): the latest run's figures are shown" per such side.
std::vector<std::string> superseded_lines(const Comparison& comparison) {
    std::vector<std::string> lines;
    for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
        const auto& s = comparison.sides[side];
        if (s.superseded == 0) continue;
        std::vector<std::string> runs;
        for (const auto id : s.run_ids) runs.push_back(std::to_string(id));
        lines.push_back(fmt::format("[{}] {} benchmark{} measured in several runs ({}): the latest run's figures are shown",
                                    side + 1, s.superseded, s.superseded == 1 ? " was" : "s were", join(runs, ", ")));
    }
    return lines;
}

}  // namespace

std::vector<std::string> settings_differences(const Comparison& comparison, const ComparisonRow& row, std::size_t side) {
    const auto reference = reference_side(comparison, row);
    const auto* s = comparison.at(row, side);
    if (!s || !reference || *reference == side) return {};
    const auto* ref = comparison.at(row, *reference);
    std::vector<std::string> out;
    const auto compare = [&](const char* name, SettingText text_of) {
        if (const auto own = text_of(*s), theirs = text_of(*ref); own != theirs)
            out.push_back(fmt::format("{} {} ([{}] {})", name, own, *reference + 1, theirs));
    };
    for (const auto& [name, text_of] : kSettings) compare(name, text_of);
    compare("load scenario", scenario_label);
    return out;
}

std::vector<std::string> comparison_warnings(const Comparison& comparison, double max_cv_pct) {
    std::vector<std::pair<std::string, std::size_t>> counted;  // identical texts of several rows once
    for (const auto& row : comparison.rows) {
        for (const auto& [name, text_of] : kSettings)
            if (auto text = differing_texts(comparison, row, text_of))
                add(counted, fmt::format("the sides ran with different settings: {} differs: {}", name, *text));
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto* s = comparison.at(row, side);
            if (s && s->benchmark.convergence == Convergence::not_converged)
                add(counted, fmt::format("[{}] did not converge (its stopping criterion gave up): its interval is "
                                         "wider than the plan asked for",
                                         side + 1));
        }
        if (auto text = differing_texts(comparison, row, scenario_label))
            add(counted, "the sides ran under different load scenarios, so their latencies mean different things: " +
                             *text);
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto* s = comparison.at(row, side);
            if (s && s->e2e.count > 0 && s->e2e.cv_pct > max_cv_pct)
                add(counted, fmt::format("[{}] latency varies (CV above {:g}%): its speed-ups are uncertain", side + 1,
                                         max_cv_pct));
        }
    }
    std::vector<std::string> lines = superseded_lines(comparison);
    for (const auto& [text, rows] : counted)
        lines.push_back(fmt::format("{} ({} row{})", text, rows, rows == 1 ? "" : "s"));
    return lines;
}

}  // namespace inferbench::report
