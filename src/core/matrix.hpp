// Expands a plan's axes into benchmark cells (Cartesian product, batch size innermost).
#pragma once

#include <cstddef>
#include <vector>

#include "core/plan.hpp"
#include "core/spec.hpp"

namespace inferbench {

// Far more than a day of benchmarks at the default settings: a larger matrix is a mistake in the plan.
inline constexpr std::size_t kMaxBenchmarks = 10'000;

// Cells removed by exclude rules are dropped; the rest keep their plan order. Throws UserError when
// the axes multiply to more than kMaxBenchmarks cells (counted before exclude rules).
std::vector<BenchmarkSpec> expand_matrix(const Plan& plan);

}  // namespace inferbench
