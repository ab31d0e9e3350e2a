// serving.xlsx, written only where the selection has serving cells:
//   "Serving"      one row per serving cell (serving_rows.hpp's serving table, keys with their units)
//   "Sweep"        one row per load of every sweep (serving_rows.hpp's sweep table), and per sweep the Pareto chart
//                  (output tokens/s per user on x, per GPU, or per server where the GPU count is unknown, on y: every
//                  load, the front joined, the goodput knee marked) and TTFT and TPOT p50/p99 against the load
//   "Requests"     every request of every serving cell, warm-up ones included: its times from the cell's first
//                  scheduled request, outcome, HTTP status, TTFT, TPOT, end-to-end, token counts (and where the
//                  output count came from), the server's own timings and its error
//   "Chunks"       every streamed chunk (arrival since the cell's first scheduled request, the gap to the chunk
//                  before, its tokens), where they fit one sheet; else left out, which Definitions says
//   "Definitions"  what each column means
// Values a request does not have are written as text ("unknown", "not defined"), never as 0.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>

#include "analysis/summary.hpp"
#include "report/report_data.hpp"
#include "report/serving_rows.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// The most chunk rows the Chunks sheet takes (a sheet's rows, less its header).
inline constexpr std::int64_t kMaxChunkRows = 1'048'575;

// Writes DIR/serving.xlsx where `summaries` has a serving cell (their requests read from `results`, one at a time);
// else removes an earlier report's file of that name and writes nothing.
ReportFiles serving_workbook_files(const store::ResultsStore& results,
                                   std::span<const analysis::BenchmarkSummary> summaries,
                                   std::span<const SweepView> views, const std::filesystem::path& dir,
                                   std::int64_t max_chunk_rows = kMaxChunkRows);

}  // namespace inferbench::report
