#include "serving/arrival_schedule.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "serving/random_draws.hpp"

namespace inferbench::serving {
namespace {

void check_arrival_settings(double rate_per_s, double burstiness, std::int64_t count) {
    if (!(rate_per_s > 0 && rate_per_s <= kMaxArrivalRate))
        throw UserError(
            fmt::format("serving arrival rate {} is outside (0, {}] requests per second: set a positive "
                        "finite rate",
                        rate_per_s, kMaxArrivalRate));
    if (!(burstiness >= kMinBurstiness && burstiness <= kMaxBurstiness))
        throw UserError(
            fmt::format("serving burstiness {} is outside [{}, {}]: 1 is Poisson arrivals, below 1 "
                        "burstier, above 1 more regular",
                        burstiness, kMinBurstiness, kMaxBurstiness));
    if (count < 0 || count > kMaxArrivals)
        throw UserError(fmt::format("{} serving arrivals asked for; at most {}", count, kMaxArrivals));
}

}  // namespace

std::vector<std::int64_t> arrival_offsets(double rate_per_s, double burstiness, std::int64_t count,
                                          std::uint64_t seed) {
    check_arrival_settings(rate_per_s, burstiness, count);
    const double scale_ns = 1e9 / (rate_per_s * burstiness);
    SplitMix64 random = stream_for(seed, "serving.arrivals");
    std::vector<std::int64_t> offsets;
    offsets.reserve(static_cast<std::size_t>(count));
    double at_ns = 0;
    for (std::int64_t i = 0; i < count; ++i) {
        offsets.push_back(static_cast<std::int64_t>(std::llround(at_ns)));
        // Held below int64's range: an arrival decades away is never reached (a run's duration ends first).
        at_ns = std::min(at_ns + gamma_draw(random, burstiness) * scale_ns, 1e18);
    }
    return offsets;
}

}  // namespace inferbench::serving
