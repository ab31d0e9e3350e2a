// The HTML report's "Load scenarios" section: each benchmark that ran a scenario other than single_stream
// with LoadGen's verdict, its queueing apart from its service time and its rates; and the server's
// find_peak steps, as a table and as p99 against the rate tried beside the bound.
#pragma once

#include <vector>

#include "analysis/summary.hpp"
#include "report/html_page.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// Nothing where every benchmark ran single_stream (or none recorded a scenario).
void scenario_section(HtmlPage& page, const std::vector<analysis::BenchmarkSummary>& summaries);

// find_peak's peak rate for a table: the rate, "none" where no rate tried met the bound (not 0, which would
// read as a measured peak), empty where find_peak did not run.
Cell peak_qps_cell(const analysis::ScenarioSummary& scenario);

}  // namespace inferbench::report
