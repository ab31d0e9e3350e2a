#include "analysis/throttle_flags.hpp"

#include <algorithm>
#include <numeric>

namespace inferbench::analysis {
namespace {

// The samples that can be judged, by time, with what each shows.
struct Judged {
    std::vector<std::int64_t> t_ns;
    std::vector<std::uint8_t> throttled;
    std::vector<std::uint64_t> reasons;   // throttling reasons set
    std::vector<std::uint8_t> below_floor;
    std::vector<std::int64_t> gaps_before;  // wide gaps among samples 0..i (a prefix count)
};

Judged judge_samples(std::span<const GpuSample> gpu, const ThrottleCriteria& criteria) {
    std::vector<const GpuSample*> order;
    for (const auto& s : gpu)
        if (sample_throttled(s, criteria)) order.push_back(&s);
    std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
    Judged j;
    std::int64_t gaps = 0;
    for (std::size_t i = 0; i < order.size(); ++i) {
        const GpuSample& s = *order[i];
        if (i > 0 && s.t_ns - j.t_ns.back() > kMaxSampleGapNs) ++gaps;
        j.t_ns.push_back(s.t_ns);
        j.gaps_before.push_back(gaps);
        j.reasons.push_back(s.clock_event_reasons.value_or(0) & clock_event::throttling_bits());
        j.below_floor.push_back(!gpu_idle(s) && s.sm_clock_mhz && criteria.floor_mhz && *s.sm_clock_mhz < *criteria.floor_mhz);
        j.throttled.push_back(j.reasons.back() != 0 || j.below_floor.back());
    }
    return j;
}

// Iteration indices by start time (the closed loop's are in order already).
std::vector<std::size_t> by_start(std::span<const IterationRecord> iterations) {
    std::vector<std::size_t> order(iterations.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    const auto earlier = [&](std::size_t a, std::size_t b) { return iterations[a].start_ns < iterations[b].start_ns; };
    if (!std::is_sorted(order.begin(), order.end(), earlier)) std::stable_sort(order.begin(), order.end(), earlier);
    return order;
}

}  // namespace

std::optional<bool> sample_throttled(const GpuSample& s, const ThrottleCriteria& criteria) {
    const bool clock_judged = s.sm_clock_mhz && criteria.floor_mhz && !gpu_idle(s);
    if (!s.clock_event_reasons && !clock_judged) return std::nullopt;
    return (s.clock_event_reasons && (*s.clock_event_reasons & clock_event::throttling_bits()) != 0) ||
           (clock_judged && *s.sm_clock_mhz < *criteria.floor_mhz);
}

IterationFlags flag_iterations(std::span<const IterationRecord> iterations, std::span<const GpuSample> gpu,
                               const ThrottleCriteria& criteria) {
    const Judged j = judge_samples(gpu, criteria);
    const auto m = static_cast<std::ptrdiff_t>(j.t_ns.size());
    IterationFlags flags;
    flags.states.assign(iterations.size(), IterationState::unknown);
    std::ptrdiff_t before = -1;  // the last sample at or before the current iteration's start
    for (const std::size_t i : by_start(iterations)) {
        const std::int64_t start = iterations[i].start_ns, end = start + iterations[i].e2e_ns;
        while (before + 1 < m && j.t_ns[static_cast<std::size_t>(before + 1)] <= start) ++before;
        std::ptrdiff_t after = before + 1;  // the first at or after its end
        while (after < m && j.t_ns[static_cast<std::size_t>(after)] < end) ++after;
        const bool covered = before >= 0 && after < m &&
                             j.gaps_before[static_cast<std::size_t>(after)] == j.gaps_before[static_cast<std::size_t>(before)];
        // Covered: every sample from `before` to `after` is judged; else only those during the iteration.
        const std::ptrdiff_t first = covered ? before : before + 1, last = covered ? after : after - 1;
        IterationState state = covered ? IterationState::clear : IterationState::unknown;
        for (std::ptrdiff_t k = std::max<std::ptrdiff_t>(first, 0); k <= last && k < m; ++k) {
            const auto u = static_cast<std::size_t>(k);
            if (!j.throttled[u]) continue;
            state = IterationState::flagged;
            flags.reasons |= j.reasons[u];
            flags.clock_below_floor = flags.clock_below_floor || j.below_floor[u];
        }
        flags.states[i] = state;
    }
    for (const IterationState state : flags.states) {
        flags.flagged += state == IterationState::flagged ? 1 : 0;
        flags.clear += state == IterationState::clear ? 1 : 0;
        flags.unknown += state == IterationState::unknown ? 1 : 0;
    }
    return flags;
}

}  // namespace inferbench::analysis
