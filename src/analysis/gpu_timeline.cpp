#include "analysis/gpu_timeline.hpp"

#include <algorithm>

namespace inferbench::analysis {

std::map<int, GpuSeries> gpu_series(std::span<const GpuSample> gpu, std::optional<SamplePhase> phase) {
    std::map<int, GpuSeries> series;
    for (const auto& s : gpu)
        if (!phase || s.phase == *phase) series[s.gpu_index].push_back(&s);
    for (auto& [index, samples] : series)
        std::stable_sort(samples.begin(), samples.end(), [](const auto* a, const auto* b) { return a->t_ns < b->t_ns; });
    return series;
}

std::vector<Interval> windows_where(std::span<const GpuSample* const> series,
                                    const std::function<bool(const GpuSample&)>& held) {
    std::vector<Interval> out;
    for (std::size_t i = 0; i + 1 < series.size(); ++i) {
        if (!held(*series[i])) continue;
        const Interval next{series[i]->t_ns, series[i + 1]->t_ns};
        if (!out.empty() && out.back().end_ns == next.start_ns)
            out.back().end_ns = next.end_ns;
        else
            out.push_back(next);
    }
    return out;
}

std::int64_t total_ns(std::span<const Interval> intervals) {
    std::int64_t sum = 0;
    for (const auto& i : intervals) sum += i.end_ns - i.start_ns;
    return sum;
}

bool inside(std::span<const Interval> intervals, std::int64_t t) {
    return std::any_of(intervals.begin(), intervals.end(), [&](const Interval& i) { return t >= i.start_ns && t < i.end_ns; });
}

}  // namespace inferbench::analysis
