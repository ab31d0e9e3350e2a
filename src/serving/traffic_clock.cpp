#include "serving/traffic_clock.hpp"

#include <cerrno>
#include <ctime>

#include "core/clock.hpp"

namespace inferbench::serving {

std::int64_t SteadyTrafficClock::now() { return monotonic_ns(); }

void SteadyTrafficClock::sleep_until(std::int64_t t_ns) {
    const std::int64_t wake_ns = t_ns - kSpinNs;
    if (monotonic_ns() < wake_ns) {
        timespec wake{};
        wake.tv_sec = static_cast<time_t>(wake_ns / 1'000'000'000);
        wake.tv_nsec = static_cast<long>(wake_ns % 1'000'000'000);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &wake, nullptr) == EINTR) {
        }
    }
    while (monotonic_ns() < t_ns) {
    }
}

}  // namespace inferbench::serving
