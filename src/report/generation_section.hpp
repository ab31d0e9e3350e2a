// The HTML report's "Generation" section: the generative cells' table (generation_rows.hpp), each column's
// definition on hovering its heading and in a "Definitions" list one click away, then the generation figures
// (generation_plots.hpp) as the page's interactive charts, bounds dashed. And each generative group's per-token
// latency over the run, among the group's charts.
#pragma once

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "report/generation_rows.hpp"
#include "report/html_page.hpp"
#include "report/plots.hpp"

namespace inferbench::report {

// Nothing where no row is generative: a page of an older store is unchanged.
void generation_section(HtmlPage& page, std::span<const GenerationRow> rows);

// A report figure as a page chart: each line a series (bounds dashed), its log2 axis kept.
Chart figure_chart(const Figure& figure);

// The end of a section whose Definitions details are open: the definitions listed and closed, then the figures as
// charts, then the section closed.
void close_with_definitions_and_figures(HtmlPage& page,
                                        const std::vector<std::pair<std::string, std::string>>& definitions,
                                        const std::vector<Figure>& figures);

// The group's per-token latency chart, where any of its benchmarks has decode steps; appended to `charts`.
void add_per_token_chart(std::vector<Chart>& charts, const ReportGroup& group);

}  // namespace inferbench::report
