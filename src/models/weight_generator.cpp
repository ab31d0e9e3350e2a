#include "models/weight_generator.hpp"

#include <cmath>
#include <stdexcept>

#include "core/fnv1a.hpp"

namespace inferbench::models {

std::uint64_t tensor_seed(std::uint64_t model_seed, std::string_view tensor_name) {
    // Mixing once more keeps seeds s and s ^ 1 from giving related streams.
    std::uint64_t state = model_seed ^ fnv1a64(tensor_name);
    return splitmix64(state);
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
