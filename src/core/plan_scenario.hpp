// The plan's checks of its load-scenario settings against each other and its batch sizes (core/plan's
// check_plan runs them): each error names where the key at fault was written.
#pragma once

#include "core/plan.hpp"

namespace inferbench {

// Throws UserError "WHERE: what is wrong; how to fix it".
void check_scenario(const Plan& plan);

}  // namespace inferbench
