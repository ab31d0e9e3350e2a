#include "models/weight_generator.hpp"

#include <cmath>
#include <stdexcept>

#include "core/fnv1a.hpp"

namespace inferbench::models {

std::uint64_t splitmix64(std::uint64_t& state) {
    state += 0x9E3779B97F4A7C15ULL;
    std::uint64_t z = state;
    z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31U);
}

std::uint64_t tensor_seed(std::uint64_t model_seed, std::string_view tensor_name) {
    // Mixing once more keeps seeds s and s ^ 1 from giving related streams.
    std::uint64_t state = model_seed ^ fnv1a64(tensor_name);
    return splitmix64(state);
}

float WeightGenerator::next_signed_unit() {
    // The top 24 bits as a signed integer in [-2^23, 2^23), scaled by 2^-23: exact in float.
    const auto bits = static_cast<std::int32_t>(next_u64() >> 40U);
    return static_cast<float>(bits - (1 << 23)) * 0x1p-23F;
}

float WeightGenerator::uniform(float lo, float hi) {
    const float half_width = (hi - lo) * 0.5F;
    const float center = (hi + lo) * 0.5F;
    return std::fma(half_width, next_signed_unit(), center);
}

void WeightGenerator::fill_symmetric(std::span<float> out, float bound) {
    for (float& v : out) {
        v = symmetric(bound);
    }
}

void WeightGenerator::fill_uniform(std::span<float> out, float lo, float hi) {
    for (float& v : out) {
        v = uniform(lo, hi);
    }
}

float he_uniform_bound(std::int64_t fan_in) {
    if (fan_in <= 0) {
        throw std::invalid_argument("he_uniform_bound: fan_in must be positive");
    }
    // sqrt is correctly rounded (IEEE 754), so the bound is the same everywhere.
    return static_cast<float>(std::sqrt(6.0 / static_cast<double>(fan_in)));
}

std::vector<float> he_uniform(WeightGenerator& gen, std::size_t count, std::int64_t fan_in) {
    std::vector<float> values(count);
    gen.fill_symmetric(values, he_uniform_bound(fan_in));
    return values;
}

}  // namespace inferbench::models
