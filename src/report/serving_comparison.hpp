// `inferbench compare` of serving cells: the same cell (model, backend, options with the load, precision) against
// several servers or devices, side by side: TTFT and TPOT p50, output tokens/s of the server and relative to the
// baseline's, goodput. Rows of no serving cell are left out; nothing where none is.
#pragma once

#include "report/comparison.hpp"
#include "report/table.hpp"

namespace inferbench::report {

Table serving_comparison_table(const Comparison& comparison);

}  // namespace inferbench::report
