#include "runner/worker/stop_rule.hpp"

#include <cmath>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::runner {
namespace {

std::string percent(double fraction) {
    const double pct = fraction * 100;
    return pct >= 100 ? fmt::format("{:.0f}%", pct) : fmt::format("{:.3g}%", pct);
}

// The not-converged endings, in the words every criterion shares; `state` is what the criterion saw.
StopOutcome gave_up(std::string_view name, const LoopSettings& loop, CriterionEnding ending, bool stopped,
                    std::int64_t iterations, const std::string& state) {
    std::string why;
    if (stopped) why = "stopped before converging";
    else if (ending == CriterionEnding::timed_out)
        why = fmt::format("not converged within stop_timeout {}", format_duration(loop.stop_timeout_ns));
    else why = fmt::format("not converged within max_iterations {}", loop.max_iterations);
    return {Convergence::not_converged, fmt::format("{}: {} ({}) after {} iterations", name, why, state, iterations)};
}

// nvbench's settled test ends a loop whose noise stays steady above max_noise: the loop is over, but the
// target was not reached, so it is not converged; the count is of the noise values actually examined.
StopOutcome plateaued(const StdrelCriterion& criterion, const std::string& noise_text, double max_noise) {
    return {Convergence::not_converged,
            fmt::format("stdrel: not converged: noise plateaued at {} (max_noise {}) over its last {} values, "
                        "after {} iterations",
                        noise_text, percent(max_noise), criterion.noise_values(), criterion.iterations())};
}

}  // namespace

StopOutcome criterion_outcome(const StdrelCriterion& criterion, const LoopSettings& loop, CriterionEnding ending,
                              bool stopped) {
    const double max_noise = loop.max_noise_pct / 100;
    const double noise = criterion.noise();
    const std::string noise_text = std::isfinite(noise) ? percent(noise) : "not yet known";
    if (ending == CriterionEnding::converged && !stopped) {
        if (criterion.settled()) return plateaued(criterion, noise_text, max_noise);
        return {Convergence::converged, fmt::format("stdrel: noise {} below max_noise {} after {} iterations",
                                                    noise_text, percent(max_noise), criterion.iterations())};
    }
    return gave_up("stdrel", loop, ending, stopped, criterion.iterations(),
                   fmt::format("noise {}, max_noise {}", noise_text, percent(max_noise)));
}

StopOutcome criterion_outcome(const EntropyCriterion& criterion, const LoopSettings& loop, CriterionEnding ending,
                              bool stopped) {
    const std::string fit =
        criterion.fitted() ? fmt::format("entropy {:.3f} bits, fit {:.3g}° and R² {:.2f}", criterion.entropy(),
                                         criterion.angle_deg(), criterion.r2())
                           : fmt::format("entropy {:.3f} bits, not yet fitted", criterion.entropy());
    if (ending == CriterionEnding::converged && !stopped)
        return {Convergence::converged,
                fmt::format("entropy: flat ({}; max_angle {:g}°, min_r2 {:g}) after {} iterations", fit,
                            loop.max_angle_deg, loop.min_r2, criterion.iterations())};
    return gave_up("entropy", loop, ending, stopped, criterion.iterations(),
                   fmt::format("{}; max_angle {:g}°, min_r2 {:g}", fit, loop.max_angle_deg, loop.min_r2));
}

}  // namespace inferbench::runner
