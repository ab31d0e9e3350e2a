// The time a load scenario runs on. The harness's own is RealClock (CLOCK_MONOTONIC, core/clock.hpp);
// tests give the scenarios a virtual clock instead (tests/runner/virtual_clock.hpp) on which a scripted
// backend's latencies are exact, so every queue wait can be computed by hand. Every wait of a scenario's
// threads goes through here, so that a virtual clock knows when all of them wait.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>

namespace inferbench::runner {

inline constexpr std::int64_t kNoDeadline = std::numeric_limits<std::int64_t>::max();

class LoadClock {
public:
    virtual ~LoadClock() = default;
    virtual std::int64_t now() = 0;
    // Returns now() once it is at least `t_ns` (at once when it already is).
    virtual std::int64_t sleep_until(std::int64_t t_ns) = 0;
    // With `lock` held: returns once `ready()` (checked under the lock) or `deadline_ns` has passed.
    // `changed` is the condition the scenario notifies (notify()) when what ready() reads changes.
    virtual void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& changed,
                      const std::function<bool()>& ready, std::int64_t deadline_ns) = 0;
    // With the lock of wait() held, after changing what its ready() reads.
    virtual void notify(std::condition_variable& changed) = 0;
    // `count` threads begin waiting through this clock (called before they start), and one of them ends.
    virtual void threads_start(int count) { (void)count; }
    virtual void thread_ends() {}
};

// CLOCK_MONOTONIC. A wait shorter than kSpinNs spins on the clock (a sleep on a shared VM wakes tens of
// microseconds late); a longer one sleeps until kSpinNs before its time, then spins.
class RealClock final : public LoadClock {
public:
    static constexpr std::int64_t kSpinNs = 200'000;

    std::int64_t now() override;
    std::int64_t sleep_until(std::int64_t t_ns) override;
    void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& changed, const std::function<bool()>& ready,
              std::int64_t deadline_ns) override;
    void notify(std::condition_variable& changed) override { changed.notify_all(); }
};

}  // namespace inferbench::runner
