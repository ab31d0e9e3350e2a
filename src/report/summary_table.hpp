// The summary table of benchmarks, and the list of runs, as report::Tables.
#pragma once

#include <vector>

#include "analysis/summary.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

Table summary_table(const std::vector<analysis::BenchmarkSummary>& summaries);
Table runs_table(const std::vector<store::RunRecord>& runs);

}  // namespace inferbench::report
