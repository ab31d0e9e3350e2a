// The summary table of benchmarks, and the list of runs, as report::Tables.
#pragma once

#include <vector>

#include "analysis/summary.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// Which rows a summary holds: one per cell (its repeats combined), or one per repeat, with its number.
enum class SummaryRows { cells, each_repeat };

// Where the summaries come from more than one host or GPU model (several_origins), the host and device name
// columns stand beside the device and show on terminals too.
Table summary_table(const std::vector<analysis::BenchmarkSummary>& summaries, SummaryRows rows = SummaryRows::cells);

// Whether the summaries come from more than one host, or from more than one GPU model (RunContext's host and
// device name; rows that recorded neither are left out): a merged or shared store's rows.
bool several_origins(const std::vector<analysis::BenchmarkSummary>& summaries);

// "12", or a combined cell's repeats "12,15,18": the ids `explain` and the findings refer to.
Cell benchmark_ids_cell(const analysis::BenchmarkSummary& summary);
Table runs_table(const std::vector<store::RunRecord>& runs);

}  // namespace inferbench::report
