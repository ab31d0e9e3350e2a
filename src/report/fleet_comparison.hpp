// The report's side-by-side table of a selection whose benchmarks ran on more than one host or GPU (shards merged
// by `inferbench merge`, a shared store): the same model, precision and batch size on each host's device, as
// `compare` puts them (comparison.hpp), with the host, GPU, driver and framework version of each column.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "report/comparison.hpp"
#include "report/html_page.hpp"
#include "report/report_data.hpp"
#include "store/results_store.hpp"

namespace inferbench::report {

// The comparison of the selected cells (a cell's repeats combined), one side per host's device, the first side the
// baseline; nothing where they span one host and at most one GPU, or where no benchmark was measured on two sides.
std::optional<Comparison> report_comparison(const std::string& db, const std::vector<store::RunRecord>& runs,
                                            const std::vector<analysis::BenchmarkSummary>& cells);

// DIR/comparison.md (legend, warnings and the side-by-side table), comparison.csv and comparison.json (one row
// per benchmark and side) and, with `excel`, comparison.xlsx: "Side by side" (the table), "Sides" (each column's
// host, device name, driver, frameworks and runs) and "Warnings". Without a comparison, removes an earlier
// report's files of those names and writes nothing.
ReportFiles write_comparison_files(const std::optional<Comparison>& comparison, const std::filesystem::path& dir,
                                   bool excel);

// The page's "Side by side" section: the columns named, the warnings, the table.
void comparison_section(HtmlPage& page, const Comparison& comparison);

}  // namespace inferbench::report
