// Findings (findings/) in the reports: the HTML report's "Findings" section (after the results), and
// the "Findings" sheet of a group's summary workbook.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "findings/finding.hpp"
#include "report/html_page.hpp"
#include "report/xlsx_writer.hpp"

namespace inferbench::report {

// The section: one expandable line per rule (severity, id, how many findings, on which benchmarks), the
// most severe rules first, each opening onto its findings (findings_table); "None." when there are none.
void findings_section(HtmlPage& page, std::span<const findings::Finding> found);

// The findings that concern any of `benchmark_ids`.
std::vector<findings::Finding> findings_of(std::span<const findings::Finding> found,
                                           std::span<const std::int64_t> benchmark_ids);

// A "Findings" sheet with the columns of findings_table; nothing when `found` is empty.
void write_findings_sheet(XlsxWorkbook& book, std::span<const findings::Finding> found);

}  // namespace inferbench::report
