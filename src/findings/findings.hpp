// Every rule over a selection of benchmarks: what `inferbench explain`, the HTML report's Findings
// section and the workbook's Findings sheet show.
#pragma once

#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "findings/evidence.hpp"
#include "findings/finding.hpp"

namespace inferbench::findings {

// Every rule's findings, problems first, then warnings, then information; within a severity in
// rule order and benchmark order.
std::vector<Finding> explain(std::span<const BenchmarkEvidence> evidence);

// Loads the selection and explains it.
std::vector<Finding> explain(const store::ResultsStore& results, std::span<const store::BenchmarkRecord> benchmarks);

nlohmann::ordered_json to_json(const Finding& finding);

}  // namespace inferbench::findings
