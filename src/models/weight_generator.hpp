// Deterministic pseudo-random weights: the same seed gives the same bytes with every compiler,
// standard library and CPU. That is why they come from core/splitmix64 and not from std::
// distributions (implementation-defined algorithms), and why every float is produced by at most one
// rounding (see uniform()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "core/splitmix64.hpp"

namespace inferbench::models {

// The seed of one tensor's generator: derived from the model seed and the tensor's name, so a
// tensor's values do not depend on the order the graph was built in.
std::uint64_t tensor_seed(std::uint64_t model_seed, std::string_view tensor_name);

class WeightGenerator {
public:
    explicit WeightGenerator(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next_u64() { return splitmix64(state_); }
    // Uniform in [-1, 1) on a grid of 2^-23: every value is an exact float.
    float next_signed_unit() { return signed_unit_float(next_u64()); }
    // Uniform in [-bound, bound): one multiplication, so one rounding.
    float symmetric(float bound) { return bound * next_signed_unit(); }
    // Uniform in [lo, hi): std::fma rounds once, where `a * b + c` might round once or twice
    // depending on whether the compiler contracts it.
    float uniform(float lo, float hi);

    void fill_symmetric(std::span<float> out, float bound);
    void fill_uniform(std::span<float> out, float lo, float hi);

private:
    std::uint64_t state_;
};

// The Kaiming/He-uniform bound sqrt(6 / fan_in): keeps the second moment of ReLU activations
// constant from layer to layer, so deep random networks neither overflow nor vanish.
float he_uniform_bound(std::int64_t fan_in);

std::vector<float> he_uniform(WeightGenerator& gen, std::size_t count, std::int64_t fan_in);

}  // namespace inferbench::models
