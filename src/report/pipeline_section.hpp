// The HTML report's "Pipeline" section: the pipeline cells' table and their stage table (pipeline_rows.hpp), each
// column's definition on hovering its heading and in a "Definitions" list, and the stage breakdown as a stacked
// bar per cell (pipeline_plots.hpp).
#pragma once

#include <span>

#include "analysis/summary.hpp"
#include "report/html_page.hpp"

namespace inferbench::report {

// Nothing where no summary is a pipeline cell's: a page of an older store is unchanged.
void pipeline_section(HtmlPage& page, std::span<const analysis::BenchmarkSummary> summaries);

}  // namespace inferbench::report
