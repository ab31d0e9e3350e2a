// When an open-loop serving run's requests arrive, as offsets from the run's start: gaps drawn from a gamma
// distribution of mean 1/rate and shape `burstiness`, the parameterisation of vLLM's `--burstiness` and
// AIPerf's `--arrival-smoothness` (scale 1/(rate x burstiness)): 1 gives exponential gaps (Poisson arrivals),
// below 1 burstier arrivals, above 1 more regular ones; the gaps' coefficient of variation is 1/sqrt(burstiness).
// The first request arrives at offset 0. Seeded on core/splitmix64 (serving/random_draws): the same seed gives
// the same schedule everywhere.
#pragma once

#include <cstdint>
#include <vector>

namespace inferbench::serving {

inline constexpr double kMaxArrivalRate = 1e6;  // requests per second
inline constexpr double kMinBurstiness = 1e-3;
inline constexpr double kMaxBurstiness = 1e3;
inline constexpr std::int64_t kMaxArrivals = std::int64_t{1} << 24;

// `count` offsets in nanoseconds, non-decreasing. Throws UserError for a rate outside (0, kMaxArrivalRate], a
// burstiness outside [kMinBurstiness, kMaxBurstiness] or a count outside [0, kMaxArrivals].
std::vector<std::int64_t> arrival_offsets(double rate_per_s, double burstiness, std::int64_t count, std::uint64_t seed);

}  // namespace inferbench::serving
