// The summary table of benchmarks, and the list of runs, as report::Tables.
#pragma once

#include <vector>

#include "analysis/summary.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// Which rows a summary holds: one per cell (its repeats combined), or one per repeat, with its number.
enum class SummaryRows { cells, each_repeat };

Table summary_table(const std::vector<analysis::BenchmarkSummary>& summaries, SummaryRows rows = SummaryRows::cells);

// "12", or a combined cell's repeats "12,15,18": the ids `explain` and the findings refer to.
Cell benchmark_ids_cell(const analysis::BenchmarkSummary& summary);
Table runs_table(const std::vector<store::RunRecord>& runs);

}  // namespace inferbench::report
