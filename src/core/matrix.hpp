// Expands a plan's axes into benchmark cells (Cartesian product, batch size innermost).
#pragma once

#include <vector>

#include "core/plan.hpp"
#include "core/spec.hpp"

namespace inferbench {

// Cells removed by exclude rules are dropped; the rest keep their plan order.
std::vector<BenchmarkSpec> expand_matrix(const Plan& plan);

}  // namespace inferbench
