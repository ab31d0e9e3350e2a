// `inferbench compare` of pipeline cells: each pipeline cell beside the network-only cell of the same model, backend,
// options, precision and batch size on the same side (device): the network's own throughput (random tensors, no
// images), the pipeline's images/s, and the share of the network's throughput the pipeline loses. Rows of no
// pipeline cell are left out; nothing where none is.
#pragma once

#include <string>

#include "analysis/pipeline_summary.hpp"
#include "report/comparison.hpp"
#include "report/table.hpp"

namespace inferbench::report {

// A comparison row's options with the pipeline's setup added ("pipeline=cpu/cpu sequential"): a pipeline cell is
// another row than the network-only cell of its setup.
std::string with_pipeline(const std::string& variant, const analysis::PipelineSummary& pipeline);

Table pipeline_comparison_table(const Comparison& comparison);

}  // namespace inferbench::report
