// The model's GFLOP per inference as every report shows it, saying when the cost model's figure is
// a bound rather than the total: ">=0.48 (642 nodes unknown)" where nodes could not be costed,
// "<=5.75 (310 nodes data-dependent)" where sizes after NonZero/NonMaxSuppression were taken at
// their largest. CSV and JSON get the number and, in their own fields, the bound and the counts.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "report/table.hpp"

namespace inferbench::report {

struct GflopsFigure {
    std::optional<double> gflops;  // per inference
    std::string bound;             // "" (the total), "lower", "upper", or "none" (both kinds of node)
    std::int64_t unknown_nodes = 0;
    std::int64_t data_dependent_nodes = 0;
    std::string text;  // "8.18", ">=0.48 (642 nodes unknown)", ...; empty without a figure
};

GflopsFigure gflops_figure(const analysis::ModelFigures& model);

// The GFLOP/inf cell (a number, or an Annotated number with the bound in its text).
Cell gflops_cell(const analysis::ModelFigures& model);

// Machine-only columns (CSV, JSON) after the GFLOP/inf column, and their cells.
std::vector<Column> gflops_bound_columns();
std::vector<Cell> gflops_bound_cells(const analysis::ModelFigures& model);

}  // namespace inferbench::report
