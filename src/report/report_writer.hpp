// `inferbench report`: everything about the selected benchmarks in one folder: the summary table
// (summary.md, summary.csv, summary.json), the Excel workbooks (excel_report.hpp), the figures
// (plots.hpp) and the HTML page (html_report.hpp).
#pragma once

#include <filesystem>

#include "report/excel_report.hpp"
#include "report/plots.hpp"
#include "report/selection.hpp"
#include "report/table.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

struct ReportOptions {
    ReportFilter filter;
    std::filesystem::path out_dir = "inferbench-results/report";
    bool excel = true;
    bool plots = true;
    bool html = true;
    bool clock_from_zero = true;  // time axes from each benchmark's first measured iteration, else CLOCK_MONOTONIC
    PlotOptions plot;
    ExcelOptions excel_options;
};

struct ReportResult {
    Table summary;  // also written as summary.md / .csv / .json
    ReportFiles files;
    // The most iteration rows the report held at one time: a group's, and the copy of one of its benchmarks'
    // that the findings judge. It grows with the largest group, not with the store.
    std::size_t most_iterations_held = 0;
};

// Throws UserError for a filter that matches nothing (select_benchmarks), EnvironmentError when a
// file cannot be written (naming it; each file is complete or absent, core/file_io.hpp) or gnuplot
// is missing (checked before anything is written).
ReportResult write_report(const store::ResultsStore& results, const ReportOptions& options);

}  // namespace inferbench::report
