// When the measured loop ends: the cell's LoopSettings read once into a rule that the loop asks after
// every iteration (done), and what the ending says about the numbers (outcome). The loop is compiled
// once per rule (runner/worker/measure_loop), so a fixed-duration benchmark pays nothing for the criteria.
//
// fixed: the duration has passed and min_iterations are done, or max_iterations.
// stdrel, entropy (runner/worker/stdrel_criterion.hpp, runner/worker/entropy_criterion.hpp): each iteration's
// end-to-end latency goes to the criterion; from min_iterations on (nvbench's min_samples), the
// criterion finishing ends the loop as converged; else stop_timeout of measuring (wall time from the
// first iteration's start, nvbench's timeout) or max_iterations end it as not converged.
#pragma once

#include <cstdint>
#include <string>

#include "core/plan/loop_settings.hpp"
#include "core/plan/stop_criterion.hpp"
#include "runner/worker/entropy_criterion.hpp"
#include "runner/worker/stdrel_criterion.hpp"

namespace inferbench::runner {

struct StopOutcome {
    Convergence convergence = Convergence::fixed;
    std::string reason;  // what the criterion saw when the loop ended; empty for fixed
};

class FixedRule {
public:
    FixedRule(const LoopSettings& loop, std::int64_t begin_ns)
        : deadline_ns_(begin_ns + loop.duration_ns), min_(loop.min_iterations), max_(loop.max_iterations) {}
    bool done(std::int64_t iterations, std::int64_t end_ns, std::int64_t /*latency_ns*/) const {
        return iterations >= max_ || (end_ns >= deadline_ns_ && iterations >= min_);
    }
    StopOutcome outcome(bool /*stopped*/) const { return {}; }

private:
    std::int64_t deadline_ns_, min_, max_;
};

// How a criterion's loop ended.
enum class CriterionEnding { running, converged, timed_out, max_iterations };

// The words of an outcome, from the criterion's state at the end.
StopOutcome criterion_outcome(const StdrelCriterion& criterion, const LoopSettings& loop, CriterionEnding ending,
                              bool stopped);
StopOutcome criterion_outcome(const EntropyCriterion& criterion, const LoopSettings& loop, CriterionEnding ending,
                              bool stopped);

template <typename Criterion>
class CriterionRule {
public:
    CriterionRule(const LoopSettings& loop, Criterion criterion, std::int64_t begin_ns)
        : loop_(loop), criterion_(std::move(criterion)), begin_ns_(begin_ns) {}

    bool done(std::int64_t iterations, std::int64_t end_ns, std::int64_t latency_ns) {
        criterion_.add(latency_ns);
        if (iterations >= loop_.min_iterations && criterion_.finished()) ending_ = CriterionEnding::converged;
        else if (end_ns - begin_ns_ >= loop_.stop_timeout_ns) ending_ = CriterionEnding::timed_out;
        else if (iterations >= loop_.max_iterations) ending_ = CriterionEnding::max_iterations;
        return ending_ != CriterionEnding::running;
    }
    StopOutcome outcome(bool stopped) const { return criterion_outcome(criterion_, loop_, ending_, stopped); }
    const Criterion& criterion() const { return criterion_; }

private:
    LoopSettings loop_;
    Criterion criterion_;
    std::int64_t begin_ns_;
    CriterionEnding ending_ = CriterionEnding::running;
};

inline StdrelCriterion make_stdrel(const LoopSettings& loop) {
    return StdrelCriterion(loop.max_noise_pct / 100, loop.min_time_ns);
}
inline EntropyCriterion make_entropy(const LoopSettings& loop) {
    return EntropyCriterion(loop.max_angle_deg, loop.min_r2);
}

}  // namespace inferbench::runner
