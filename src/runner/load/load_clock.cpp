#include "runner/load/load_clock.hpp"

#include <chrono>
#include <thread>

#include "core/clock.hpp"

namespace inferbench::runner {
namespace {

// steady_clock is CLOCK_MONOTONIC on Linux, the clock of monotonic_ns().
std::chrono::steady_clock::time_point steady_at(std::int64_t t_ns) {
    return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(t_ns));
}

}  // namespace

std::int64_t RealClock::now() { return monotonic_ns(); }

std::int64_t RealClock::sleep_until(std::int64_t t_ns) {
    while (true) {
        const std::int64_t now = monotonic_ns();
        if (now >= t_ns) return now;
        if (t_ns - now > 2 * kSpinNs) std::this_thread::sleep_until(steady_at(t_ns - kSpinNs));
    }
}

void RealClock::wait(std::unique_lock<std::mutex>& lock, std::condition_variable& changed,
                     const std::function<bool()>& ready, std::int64_t deadline_ns) {
    if (deadline_ns == kNoDeadline) {
        changed.wait(lock, ready);
        return;
    }
    changed.wait_until(lock, steady_at(deadline_ns), ready);
}

}  // namespace inferbench::runner
