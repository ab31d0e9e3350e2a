// The continuous draws serving workloads and arrivals need, on core/splitmix64 alone (never a std::
// distribution, whose algorithms differ between standard libraries), so a seed gives the same numbers with
// every compiler and library.
#pragma once

#include <cstdint>

#include "core/splitmix64.hpp"

namespace inferbench::serving {

// Uniform in (0, 1]: 53 random bits, never 0, so its logarithm is finite.
double unit_draw(SplitMix64& random);

// Standard normal (mean 0, deviation 1): Box-Muller's cosine branch.
double normal_draw(SplitMix64& random);

// Gamma of `shape` > 0 and scale 1 (mean shape, variance shape): Marsaglia and Tsang's squeeze (2000) for
// shape >= 1; below 1, a draw of shape + 1 times U^(1/shape) (their boost).
double gamma_draw(SplitMix64& random, double shape);

// A stream of its own for each purpose and number, so that one part of a workload does not shift when
// another draws more (the prefix of group 3 is the same whatever the lengths drew).
SplitMix64 stream_for(std::uint64_t seed, const char* purpose, std::uint64_t number = 0);

}  // namespace inferbench::serving
