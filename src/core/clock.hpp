// The one clock of inferbench: CLOCK_MONOTONIC in int64 nanoseconds, shared by worker, orchestrator
// and telemetry samplers (all processes of one host read the same monotonic clock).
#pragma once

#include <cstdint>
#include <ctime>

namespace inferbench {

inline std::int64_t monotonic_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace inferbench
