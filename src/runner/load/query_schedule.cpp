#include "runner/load/query_schedule.hpp"

#include <algorithm>
#include <cmath>

#include "core/splitmix64.hpp"

namespace inferbench::runner {

std::vector<std::int64_t> poisson_schedule(double rate_per_s, std::int64_t duration_ns, std::int64_t min_queries,
                                           std::int64_t max_queries, std::uint64_t seed) {
    std::vector<std::int64_t> schedule;
    if (rate_per_s <= 0 || max_queries <= 0) return schedule;
    const double mean_gap_ns = 1e9 / rate_per_s;
    SplitMix64 random(seed);
    double at_ns = 0;
    while (static_cast<std::int64_t>(schedule.size()) < max_queries) {
        schedule.push_back(static_cast<std::int64_t>(std::llround(at_ns)));
        if (schedule.back() >= duration_ns && static_cast<std::int64_t>(schedule.size()) >= min_queries) break;
        // u in (0, 1]: -ln(u) is an exponential gap of mean 1, never infinite.
        const double u = static_cast<double>((random.next() >> 11U) + 1) * 0x1p-53;
        at_ns += -std::log(u) * mean_gap_ns;
    }
    return schedule;
}

std::vector<std::int64_t> offline_schedule(std::int64_t count) {
    return std::vector<std::int64_t>(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)), 0);
}

std::int64_t offline_inferences(double seconds_per_inference, std::int64_t streams, std::int64_t duration_ns,
                                std::int64_t min_queries, std::int64_t max_queries) {
    double expected = static_cast<double>(min_queries);
    if (seconds_per_inference > 0)
        expected = 1.1 * static_cast<double>(duration_ns) * 1e-9 * static_cast<double>(streams) / seconds_per_inference;
    const auto count = static_cast<std::int64_t>(std::ceil(std::min(expected, 1e15)));
    return std::clamp<std::int64_t>(std::max(count, min_queries), 1, std::max<std::int64_t>(max_queries, 1));
}

}  // namespace inferbench::runner
