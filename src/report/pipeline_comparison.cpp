#include "report/pipeline_comparison.hpp"

#include <fmt/format.h>

#include "report/pipeline_rows.hpp"

namespace inferbench::report {
namespace {

constexpr std::string_view kPipelineMark = "pipeline=";

// The options of the network-only row a pipeline row's variant was made from: the pipeline part taken off.
std::string network_variant(const std::string& variant) {
    const auto at = variant.find(kPipelineMark);
    if (at == std::string::npos) return variant;
    return variant.substr(0, at == 0 ? 0 : at - 1);
}

const ComparisonRow* network_row(const Comparison& comparison, const ComparisonRow& pipeline_row) {
    const auto& [model, backend, variant, precision, batch] = pipeline_row.key;
    const ComparisonKey want{model, backend, network_variant(variant), precision, batch};
    for (const auto& row : comparison.rows)
        if (row.key == want) return &row;
    return nullptr;
}

// The figures of one side: network-only inf/s, pipeline images/s, the share lost.
std::vector<Cell> side_cells(const analysis::BenchmarkSummary* pipeline, const analysis::BenchmarkSummary* network) {
    std::vector<Cell> cells(3, Null{});  // built one by one: GCC 12 misreads an initializer list of variants
    if (!pipeline || !pipeline->pipeline) return cells;
    const double images = pipeline->pipeline->images_per_s;
    cells[1] = images;
    if (!network || network->throughput_per_s <= 0) {
        cells[0] = std::string("not measured");
        cells[2] = std::string("unknown");
        return cells;
    }
    cells[0] = network->throughput_per_s;
    cells[2] = 100.0 * (1.0 - images / network->throughput_per_s);
    return cells;
}

}  // namespace

std::string with_pipeline(const std::string& variant, const analysis::PipelineSummary& pipeline) {
    return fmt::format("{}{}{}{}", variant, variant.empty() ? "" : " ", kPipelineMark, pipeline_setup(pipeline));
}

Table pipeline_comparison_table(const Comparison& comparison) {
    Table table;
    table.name = "pipeline_comparison";
    table.columns = {identity_column("model", "model"), identity_column("backend", "backend"),
                     identity_column("variant", "options", Fit::wrap), identity_column("precision", "precision"),
                     identity_column("batch", "batch")};
    for (std::size_t i = 1; i <= comparison.sides.size(); ++i) {
        const auto column = [i](const char* key, const char* title, int decimals) {
            return Column{fmt::format("s{}_{}", i, key), fmt::format("[{}] {}", i, title), decimals};
        };
        for (auto c : {column("network_per_s", "network inf/s", 1), column("pipeline_images_per_s", "pipeline img/s", 1),
                       column("lost_pct", "lost %", 1)})
            table.columns.push_back(std::move(c));
    }
    for (const auto& row : comparison.rows) {
        bool any = false;
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto* s = comparison.at(row, side);
            any = any || (s && s->pipeline);
        }
        if (!any) continue;
        const auto* network = network_row(comparison, row);
        const auto& [model, backend, variant, precision, batch] = row.key;
        std::vector<Cell> cells = {model, backend, variant, precision, batch};
        for (std::size_t side = 0; side < comparison.sides.size(); ++side) {
            const auto figures = side_cells(comparison.at(row, side), network ? comparison.at(*network, side) : nullptr);
            cells.insert(cells.end(), figures.begin(), figures.end());
        }
        table.rows.push_back(std::move(cells));
    }
    return table;
}

}  // namespace inferbench::report
