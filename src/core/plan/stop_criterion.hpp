// When the measured loop ends, and what that says about its numbers: the stopping criterion a plan
// chooses (`stop:`), and per benchmark whether it converged. One enum each, with the one mapping to the
// words plans, the results database and every output use.
//
// The criteria are nvbench's (NVIDIA/nvbench, nvbench/detail/stdrel_criterion.cxx and
// entropy_criterion.cxx); runner/worker/stop_rule.hpp says exactly what each computes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferbench {

enum class StopCriterion {
    fixed,    // a duration and an iteration count (duration, min_iterations, max_iterations)
    stdrel,   // the relative standard deviation of the iterations falls below max_noise, or settles
    entropy,  // the entropy of the latency distribution stops growing (a flat linear fit)
};

inline constexpr StopCriterion kAllStopCriteria[] = {StopCriterion::fixed, StopCriterion::stdrel,
                                                     StopCriterion::entropy};

std::string_view to_string(StopCriterion criterion);
std::optional<StopCriterion> parse_stop_criterion(std::string_view text);
std::string known_stop_criteria();  // "fixed, stdrel, entropy"

// Whether a benchmark's criterion was met. A fixed-duration benchmark was never asked to converge:
// it is neither converged nor not, it is "fixed".
enum class Convergence {
    fixed,
    converged,
    not_converged,  // gave up: stop_timeout or max_iterations came first, or it was stopped
};

inline constexpr Convergence kAllConvergences[] = {Convergence::fixed, Convergence::converged,
                                                   Convergence::not_converged};

// "fixed", "converged", "not_converged": the stored words.
std::string_view to_string(Convergence convergence);
std::optional<Convergence> parse_convergence(std::string_view text);
std::string known_convergences();
// For people: "fixed", "converged", "not converged".
std::string_view convergence_label(Convergence convergence);

}  // namespace inferbench
