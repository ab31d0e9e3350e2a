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

// What the rules of one benchmark found (one list per rule, in rule order): the part of explain() that reads
// the benchmark's rows, so that a reader of many benchmarks judges each while it holds its rows, releases them
// (release_rows) and keeps only this and the evidence without rows for the rules across benchmarks.
struct BenchmarkFindings {
    std::vector<std::vector<Finding>> by_rule;
};
BenchmarkFindings benchmark_findings(const BenchmarkEvidence& evidence);

// explain() from each benchmark's own findings (`own[i]` of `evidence[i]`, made while it held its rows) and the
// evidence, whose rows may be released: the same findings in the same order.
std::vector<Finding> explain(std::span<const BenchmarkEvidence> evidence, std::span<const BenchmarkFindings> own);

// Loads the selection and explains it, one benchmark's rows at a time (read once, judged, released): the
// memory holds the largest benchmark's rows, not the selection's.
std::vector<Finding> explain(const store::ResultsStore& results, std::span<const store::BenchmarkRecord> benchmarks);

nlohmann::ordered_json to_json(const Finding& finding);

}  // namespace inferbench::findings
