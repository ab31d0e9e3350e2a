#include "report/cost_figure.hpp"

#include <cmath>

#include <fmt/format.h>

namespace inferbench::report {
namespace {

std::int64_t count_of(const std::optional<double>& value) {
    return value ? static_cast<std::int64_t>(std::llround(*value)) : 0;
}

std::string nodes(std::int64_t n, const char* what) { return fmt::format("{} node{} {}", n, n == 1 ? "" : "s", what); }

}  // namespace

GflopsFigure gflops_figure(const analysis::ModelFigures& model) {
    GflopsFigure figure;
    figure.unknown_nodes = count_of(model.cost_unknown_nodes);
    figure.data_dependent_nodes = count_of(model.cost_data_dependent_nodes);
    if (!model.flops_per_inference) return figure;
    figure.gflops = *model.flops_per_inference / 1e9;  // not * 1e-9: CSV reads 8.2, not 8.200000000000001
    const std::string value = fmt::format("{:.2f}", *figure.gflops);
    const bool unknown = figure.unknown_nodes > 0;
    const bool data_dependent = figure.data_dependent_nodes > 0;
    if (unknown && data_dependent) {
        figure.bound = "none";
        figure.text = fmt::format("~{} ({}, {}; not a total)", value, nodes(figure.unknown_nodes, "unknown"),
                                  nodes(figure.data_dependent_nodes, "data-dependent"));
    } else if (unknown) {
        figure.bound = "lower";
        figure.text = fmt::format(">={} ({})", value, nodes(figure.unknown_nodes, "unknown"));
    } else if (data_dependent) {
        figure.bound = "upper";
        figure.text = fmt::format("<={} ({})", value, nodes(figure.data_dependent_nodes, "data-dependent"));
    } else {
        figure.text = value;
    }
    return figure;
}

Cell gflops_cell(const analysis::ModelFigures& model) {
    const GflopsFigure figure = gflops_figure(model);
    if (!figure.gflops) return Null{};
    if (figure.bound.empty()) return *figure.gflops;
    return Annotated{*figure.gflops, figure.text};
}

std::vector<Column> gflops_bound_columns() {
    const auto machine = [](const char* key, const char* title) {
        return Column{.key = key, .title = title, .decimals = 0, .machine_only = true};
    };
    return {machine("gflops_bound", "GFLOP bound"), machine("cost_unknown_nodes", "unknown nodes"),
            machine("cost_data_dependent_nodes", "data-dependent nodes")};
}

std::vector<Cell> gflops_bound_cells(const analysis::ModelFigures& model) {
    const GflopsFigure figure = gflops_figure(model);
    if (!figure.gflops) return {Null{}, Null{}, Null{}};
    const auto count = [](const std::optional<double>& value) -> Cell {
        return value ? Cell{count_of(value)} : Cell{Null{}};
    };
    return {figure.bound.empty() ? std::string("total") : figure.bound, count(model.cost_unknown_nodes),
            count(model.cost_data_dependent_nodes)};
}

}  // namespace inferbench::report
