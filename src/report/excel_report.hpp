// The Excel workbooks of one group of benchmarks (same device, model, backend, precision, options):
//   latency-<key>.xlsx   one sheet per batch size, one row per measured iteration: t_s, e2e_ms, h2d_ms,
//                        compute_ms, d2h_ms (device times empty where not measured)
//   gpu-<key>.xlsx       one sheet per batch size, one row per GPU sample: power, temperature, clocks,
//                        utilisation, framebuffer, clock-event (throttle) reasons
//   cpu-<key>.xlsx       one sheet per batch size, one row per CPU sample: process CPU and RSS, host
//   summary-<key>.xlsx   "summary": one row per batch size, one column per metric, a chart of each
//                        metric against batch size; then one sheet per metric over time (100 ms means,
//                        or buckets as wide as the slowest series' median interval; one column per
//                        batch size) with a chart, one line per batch size; and a
//                        "Findings" sheet with the findings of the group's benchmarks, where any
// Every workbook is streamed to its file (xlsx_writer: memory stays flat for millions of rows); a batch
// with more rows than a sheet holds continues on "batch 8 (2)", ... Times are seconds on the group's
// axis (report_data.hpp). A workbook without data is not written; the outcome says why.
#pragma once

#include <cstdint>
#include <filesystem>

#include "findings/finding.hpp"
#include "report/report_data.hpp"

namespace inferbench::report {

struct ExcelOptions {
    std::int64_t max_rows_per_sheet = 1'048'576;  // Excel's limit, header included
    double summary_bucket_s = 0.1;                // the finest time grid of the summary workbook's metric sheets
    std::vector<findings::Finding> findings;      // of the selection: the summary workbook's Findings sheet
};

ReportFiles write_excel_workbooks(const ReportGroup& group, const std::filesystem::path& dir,
                                  const ExcelOptions& options = {});

// Each workbook alone; false (and nothing written) when the group has no such data.
bool write_latency_workbook(const ReportGroup& group, const std::filesystem::path& file,
                            const ExcelOptions& options = {});
bool write_gpu_workbook(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options = {});
bool write_cpu_workbook(const ReportGroup& group, const std::filesystem::path& file, const ExcelOptions& options = {});
bool write_summary_workbook(const ReportGroup& group, const std::filesystem::path& file,
                            const ExcelOptions& options = {});

}  // namespace inferbench::report
