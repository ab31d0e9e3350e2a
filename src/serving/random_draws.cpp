#include "serving/random_draws.hpp"

#include <cmath>
#include <numbers>

#include "core/fnv1a.hpp"

namespace inferbench::serving {

double unit_draw(SplitMix64& random) { return static_cast<double>((random.next() >> 11U) + 1) * 0x1p-53; }

double normal_draw(SplitMix64& random) {
    const double radius = std::sqrt(-2.0 * std::log(unit_draw(random)));
    return radius * std::cos(2.0 * std::numbers::pi * unit_draw(random));
}

double gamma_draw(SplitMix64& random, double shape) {
    if (shape < 1.0) return gamma_draw(random, shape + 1.0) * std::pow(unit_draw(random), 1.0 / shape);
    const double d = shape - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    while (true) {
        const double x = normal_draw(random);
        const double t = 1.0 + c * x;
        if (t <= 0) continue;
        const double v = t * t * t;
        const double u = unit_draw(random);
        if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
        if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
    }
}

SplitMix64 stream_for(std::uint64_t seed, const char* purpose, std::uint64_t number) {
    return SplitMix64(splitmix64_mix(seed ^ fnv1a64(purpose)) ^ splitmix64_mix(number + 0x5EEDULL));
}

}  // namespace inferbench::serving
