// The one splitmix64 (Steele, Lea, Flood 2014; reference: prng.di.unimi.it/splitmix64.c): a tiny
// generator whose output is the same with every compiler, standard library and CPU, which std::
// distributions (implementation-defined algorithms) are not. It seeds weights (models/weight_generator),
// random inputs (runner/random_inputs) and calibration data (backends/tensorrt), and its finalizer ends
// the model-file hash (core/file_hash): what these produce for a seed must not change.
#pragma once

#include <cstdint>

namespace inferbench {

// The finalizer: every input bit reaches every output bit.
constexpr std::uint64_t splitmix64_mix(std::uint64_t z) {
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

// One step: advances `state` and returns the next output.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
    state += 0x9E3779B97F4A7C15ULL;
    return splitmix64_mix(state);
}

// Uniform in [-1, 1) from the top 24 bits of `bits`, on a grid of 2^-23: every value is an exact
// float, so no rounding (and no compiler's choice of contraction) can change it.
constexpr float signed_unit_float(std::uint64_t bits) {
    const auto top = static_cast<std::int32_t>(bits >> 40U);
    return static_cast<float>(top - (1 << 23)) * 0x1p-23F;
}

// A splitmix64 stream from a seed.
class SplitMix64 {
public:
    constexpr explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
    constexpr std::uint64_t next() { return splitmix64(state_); }
    constexpr float next_signed_unit() { return signed_unit_float(next()); }

private:
    std::uint64_t state_;
};

}  // namespace inferbench
