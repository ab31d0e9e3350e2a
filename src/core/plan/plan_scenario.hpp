// The plan's checks of its load-scenario settings against each other and its batch sizes (core/plan/plan's
// check_plan runs them): each error names where the key at fault was written.
#pragma once

#include <optional>
#include <string>

#include "core/plan/plan.hpp"

namespace inferbench {

// Throws UserError "WHERE: what is wrong; how to fix it".
void check_scenario(const Plan& plan);

// single_stream and multi_stream are judged by LoadGen's early-stopping estimate of their percentile, which
// needs a least number of queries (64 for p90, 662 for p99): a fixed-duration run whose min_iterations the plan
// left at its default runs at least that many (LoadGen's own runs go on to their min_query_count likewise), up to
// max_iterations. The server's find_peak steps likewise measure the 662 queries that LoadGen's early stopping
// needs to pass a p99 with one query over the bound (a 1 s step at 100 qps could pass none). Returns the line
// that says so, or nothing where min_iterations stays as it was.
std::optional<std::string> raise_min_iterations_for_verdict(Plan& plan);

}  // namespace inferbench
