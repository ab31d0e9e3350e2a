// The checks between a plan's stopping settings (core/plan/loop_settings: stop and the settings of each
// criterion) and the keys around them, run by check_plan once every source of the plan is applied.
#pragma once

#include "core/plan/plan.hpp"

namespace inferbench {

// Throws UserError at the position of the key to change (Plan::origins), else the plan's
// source: a criterion's setting given while another criterion is chosen (it would be ignored in
// silence), a stdrel stop_timeout below min_time, a timeout that kills the worker before warmup and
// the measured phase (duration for fixed, stop_timeout for the others) have passed.
void check_stop_settings(const Plan& plan);

}  // namespace inferbench
