#include <algorithm>

#include <fmt/format.h>

#include "core/statistics.hpp"
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

// "[1] single_stream, [2] server 1000 qps (p99 <= 15.00 ms)" for a row whose sides ran different loads.
std::optional<std::string> scenario_difference(const Comparison& comparison, const ComparisonRow& row) {
    std::vector<std::string> labels;
    std::optional<std::string> first;
    bool differs = false;
    for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
        const auto* s = comparison.at(row, side);
        if (!s) continue;
        const std::string& label = s->scenario.label.empty() ? std::string("not recorded") : s->scenario.label;
        if (first && *first != label) differs = true;
        if (!first) first = label;
        labels.push_back(fmt::format("[{}] {}", side + 1, label));
    }
    if (!differs) return std::nullopt;
    return join(labels, ", ");
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
        if (auto text = scenario_difference(comparison, row))
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
