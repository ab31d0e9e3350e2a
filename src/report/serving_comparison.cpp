#include "report/serving_comparison.hpp"

#include <fmt/format.h>

#include "report/serving_rows.hpp"

namespace inferbench::report {
namespace {

const analysis::ServingSummary* serving_of(const analysis::BenchmarkSummary* s) {
    return s && s->serving ? &*s->serving : nullptr;
}

Cell p50_or(const std::optional<analysis::LatencyDistribution>& d) {
    return d ? Cell{Duration{d->ns.p50}} : Cell{std::string(analysis::kNotDefinedText)};
}

// The five figures of one serving summary on one side, its tokens/s relative to the baseline's.
std::vector<Cell> side_cells(const analysis::ServingSummary* s, const analysis::ServingSummary* base) {
    std::vector<Cell> cells(5, Null{});  // built one by one: GCC 12 misreads an initializer list of variants
    if (!s) return cells;
    cells[0] = p50_or(s->ttft);
    cells[1] = p50_or(s->tpot);
    cells[2] = s->output_tokens_per_s ? Cell{*s->output_tokens_per_s} : Cell{std::string("unknown")};
    if (base && base->output_tokens_per_s && s->output_tokens_per_s && *base->output_tokens_per_s > 0)
        cells[3] = *s->output_tokens_per_s / *base->output_tokens_per_s;
    cells[4] = s->goodput ? Cell{s->goodput->fraction * 100} : Cell{std::string("no SLOs")};
    return cells;
}

}  // namespace

Table serving_comparison_table(const Comparison& comparison) {
    Table table;
    table.name = "serving_comparison";
    table.columns = {{"model", "model"}, {"backend", "backend"}, {"variant", "options"}, {"precision", "precision"}};
    for (std::size_t i = 1; i <= comparison.sides.size(); ++i) {
        const auto column = [i](const char* key, const char* title, int decimals) {
            return Column{fmt::format("s{}_{}", i, key), fmt::format("[{}] {}", i, title), decimals};
        };
        for (auto c : {column("ttft_p50_ms", "TTFT p50", 2), column("tpot_p50_ms", "TPOT p50", 2),
                       column("output_tokens_per_s", "out tok/s", 1), column("tokens_ratio", "x", 2),
                       column("goodput_pct", "goodput %", 1)})
            table.columns.push_back(std::move(c));
    }
    for (const auto& row : comparison.rows) {
        bool any = false;
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) any = any || serving_of(comparison.at(row, side));
        if (!any) continue;
        const auto& [model, backend, variant, precision, batch] = row.key;
        std::vector<Cell> cells = {model, backend, variant, precision};
        const auto* base = serving_of(comparison.at(row, comparison.baseline));
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto figures = side_cells(serving_of(comparison.at(row, side)), base);
            cells.insert(cells.end(), figures.begin(), figures.end());
        }
        table.rows.push_back(std::move(cells));
    }
    return table;
}

}  // namespace inferbench::report
