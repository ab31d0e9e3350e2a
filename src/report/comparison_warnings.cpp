#include <algorithm>

#include <fmt/format.h>

#include "core/statistics/statistics.hpp"
#include "core/units.hpp"
#include "report/comparison.hpp"

namespace inferbench::report {
namespace {

struct Setting {
    const char* name;
    std::optional<std::int64_t> analysis::CellSettings::*field;
    bool duration;
};

constexpr Setting kSettings[] = {
    {"duration", &analysis::CellSettings::duration_ns, true},
    {"warm-up", &analysis::CellSettings::warmup_ns, true},
    {"warm-up iterations", &analysis::CellSettings::warmup_iterations, false},
    {"min iterations", &analysis::CellSettings::min_iterations, false},
    {"max iterations", &analysis::CellSettings::max_iterations, false},
};

std::string setting_text(const std::optional<std::int64_t>& value, bool duration) {
    if (!value) return "not recorded";
    return duration ? format_duration(*value) : std::to_string(*value);
}

// "duration differs: [1] 10s, [2] 2s" for a row whose sides ran with different values of `setting`.
std::optional<std::string> setting_difference(const Comparison& comparison, const ComparisonRow& row,
                                              const Setting& setting) {
    std::vector<std::string> values;
    std::optional<std::optional<std::int64_t>> first;
    bool differs = false;
    for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
        const auto* s = comparison.at(row, side);
        if (!s) continue;
        const auto& value = s->settings.*setting.field;
        if (first && *first != value) differs = true;
        if (!first) first = value;
        values.push_back(fmt::format("[{}] {}", side + 1, setting_text(value, setting.duration)));
    }
    if (!differs) return std::nullopt;
    return fmt::format("{} differs: {}", setting.name, join(values, ", "));
}

// The same for settings said as text: the measure conditions (core/plan/measure_conditions: throttle policy,
// L2 flush, sync ...), the stopping criterion with its own settings, and the repeats a row stands for (a
// mean of 5 repeats against one run is a different measurement).
using SettingText = std::string (*)(const analysis::BenchmarkSummary&);
constexpr std::pair<const char*, SettingText> kTextSettings[] = {
    {"measure conditions",
     [](const analysis::BenchmarkSummary& s) {
         return s.settings.conditions ? describe(*s.settings.conditions) : std::string("not recorded");
     }},
    {"stopping criterion",
     [](const analysis::BenchmarkSummary& s) { return s.settings.stop.empty() ? "not recorded" : s.settings.stop; }},
    {"repeats", [](const analysis::BenchmarkSummary& s) { return std::to_string(s.repeats); }},
};

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

// The load scenario of a side: "single_stream", "server 1000 qps (p99 <= 15.00 ms)".
std::string scenario_label(const analysis::BenchmarkSummary& s) {
    return s.scenario.label.empty() ? std::string("not recorded") : s.scenario.label;
}

void add(std::vector<std::pair<std::string, std::size_t>>& counted, std::string text) {
    auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& c) { return c.first == text; });
    if (it == counted.end()) counted.emplace_back(std::move(text), 1);
    else ++it->second;
}

}  // namespace

std::vector<std::string> comparison_warnings(const Comparison& comparison, double max_cv_pct) {
    std::vector<std::pair<std::string, std::size_t>> counted;  // identical texts of several rows once
    for (const auto& row : comparison.rows) {
        for (const auto& setting : kSettings)
            if (auto text = setting_difference(comparison, row, setting))
                add(counted, "the sides ran with different settings: " + *text);
        for (const auto& [name, text_of] : kTextSettings)
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
    std::vector<std::string> lines;
    for (const auto& [text, rows] : counted)
        lines.push_back(fmt::format("{} ({} row{})", text, rows, rows == 1 ? "" : "s"));
    return lines;
}

}  // namespace inferbench::report
