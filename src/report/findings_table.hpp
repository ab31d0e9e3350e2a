// Findings (findings/) as a Table, for every text format: `inferbench explain`, the workbook's
// Findings sheet.
#pragma once

#include <span>

#include "findings/finding.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// One row per finding: severity, id, benchmarks, statement, evidence, what to try.
Table findings_table(std::span<const findings::Finding> found);

}  // namespace inferbench::report
