// The HTML report's "Load scenarios" section: each benchmark that ran a scenario other than single_stream
// with LoadGen's verdict, its queueing apart from its service time and its rates; and the server's
// find_peak steps, as a table and as p99 against the rate tried beside the bound.
#pragma once

#include <vector>

#include "analysis/summary.hpp"
#include "report/html_page.hpp"

namespace inferbench::report {

// Nothing where every benchmark ran single_stream (or none recorded a scenario).
void scenario_section(HtmlPage& page, const std::vector<analysis::BenchmarkSummary>& summaries);

}  // namespace inferbench::report
