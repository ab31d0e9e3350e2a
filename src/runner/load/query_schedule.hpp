// When a scenario's queries arrive, relative to the run's start, as pure functions of the settings and the
// seed: the same seed gives the same schedule everywhere (core/splitmix64, never a std:: distribution,
// whose algorithms differ between standard libraries).
#pragma once

#include <cstdint>
#include <vector>

namespace inferbench::runner {

// Poisson arrivals at `rate_per_s` (exponential gaps, inverse-transform from splitmix64 draws of 53
// bits), from offset 0 until the last arrival is at or past `duration_ns` and there are at least
// `min_queries`, but never more than `max_queries`. The first query arrives at offset 0.
std::vector<std::int64_t> poisson_schedule(double rate_per_s, std::int64_t duration_ns, std::int64_t min_queries,
                                           std::int64_t max_queries, std::uint64_t seed);

// Offline: `count` queries, all at offset 0.
std::vector<std::int64_t> offline_schedule(std::int64_t count);

// The offline query's size in inferences (LoadGen issues 10% more than the expected pace needs): enough
// for `duration_ns` at `seconds_per_inference` on each of `streams` instances, within [min, max].
std::int64_t offline_inferences(double seconds_per_inference, std::int64_t streams, std::int64_t duration_ns,
                                std::int64_t min_queries, std::int64_t max_queries);

}  // namespace inferbench::runner
