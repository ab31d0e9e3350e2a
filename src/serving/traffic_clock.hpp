// The time the traffic loop (serving/traffic_loop) runs on. The harness's is SteadyTrafficClock (core/clock's
// CLOCK_MONOTONIC, the clock the HTTP client stamps chunks with); tests give the loop a virtual clock that a
// scripted RequestPort moves, so every send time can be computed by hand. The loop waits through here only
// when nothing is in flight; otherwise it waits in RequestPort::poll().
#pragma once

#include <cstdint>

namespace inferbench::serving {

class TrafficClock {
public:
    virtual ~TrafficClock() = default;
    virtual std::int64_t now() = 0;
    // Returns once now() is at least `t_ns` (at once when it already is).
    virtual void sleep_until(std::int64_t t_ns) = 0;
};

// CLOCK_MONOTONIC. Sleeps until kSpinNs before the time, then spins: a sleep on a shared machine wakes tens of
// microseconds late, which would delay every open-loop arrival by as much.
class SteadyTrafficClock final : public TrafficClock {
public:
    static constexpr std::int64_t kSpinNs = 200'000;
    std::int64_t now() override;
    void sleep_until(std::int64_t t_ns) override;
};

}  // namespace inferbench::serving
