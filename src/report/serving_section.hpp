// The HTML report's "Serving" section: the serving cells' table (serving_rows.hpp) with each column's definition on
// hovering its heading and in a "Definitions" list, what each sweep shows (its Pareto front, goodput knee and
// saturation point, a sentence each), the sweep table, and the serving figures (serving_plots.hpp) as the page's
// interactive charts.
#pragma once

#include <span>

#include "analysis/summary.hpp"
#include "report/html_page.hpp"
#include "report/serving_rows.hpp"

namespace inferbench::report {

// Nothing where no summary is a serving cell's: a page of an older store is unchanged.
void serving_section(HtmlPage& page, std::span<const analysis::BenchmarkSummary> summaries,
                     std::span<const SweepView> views);

}  // namespace inferbench::report
