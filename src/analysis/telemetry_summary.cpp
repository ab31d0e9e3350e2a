#include "analysis/telemetry_summary.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "analysis/gpu_timeline.hpp"
#include "core/spec.hpp"
#include "core/time_units.hpp"

namespace inferbench::analysis {
namespace {

using Series = GpuSeries;  // one GPU's measure samples, by time

std::optional<double> power_of(const GpuSample& s) { return s.power_w ? s.power_w : s.power_avg_w; }

std::map<int, Series> measure_series(std::span<const GpuSample> gpu) { return gpu_series(gpu, SamplePhase::measure); }

struct CounterEnergy {
    double joules = 0;
    std::int64_t first_ns = 0, last_ns = 0;  // the two readings it comes from
};

// The energy counter's rise over the measure phase of one GPU: from its first reading in the phase
// to the first reading after it (samplers read the counter when the phase changes and every few
// seconds, so where the phase's last sample has no reading, the teardown phase's first one closes it).
std::optional<CounterEnergy> counter_energy(const Series& samples, std::span<const GpuSample> all) {
    const GpuSample* first = nullptr;
    const GpuSample* last = nullptr;
    for (const auto* s : samples) {
        if (!s->energy_mj) continue;
        if (!first) first = s;
        last = s;
    }
    if (first && !samples.empty() && !samples.back()->energy_mj) {
        const GpuSample& end = *samples.back();
        const GpuSample* after = nullptr;
        for (const auto& s : all) {
            if (s.gpu_index != end.gpu_index || s.phase != SamplePhase::teardown || !s.energy_mj || s.t_ns < end.t_ns) continue;
            if (!after || s.t_ns < after->t_ns) after = &s;
        }
        if (after) last = after;
    }
    if (!first || first == last || *last->energy_mj < *first->energy_mj) return std::nullopt;
    return CounterEnergy{(*last->energy_mj - *first->energy_mj) / 1000.0, first->t_ns, last->t_ns};
}

// Trapezoid rule over consecutive samples that both have a power reading.
std::optional<double> integrated_energy_j(const Series& samples) {
    std::optional<double> joules;
    for (std::size_t i = 1; i < samples.size(); ++i) {
        const auto p0 = power_of(*samples[i - 1]);
        const auto p1 = power_of(*samples[i]);
        if (!p0 || !p1) continue;
        const double seconds = ns_to_s(samples[i]->t_ns - samples[i - 1]->t_ns);
        joules = joules.value_or(0.0) + (*p0 + *p1) / 2.0 * seconds;
    }
    return joules;
}

// Share of the sampled time with `bit` set: each sample stands for the time to the next one; a single
// sample stands for itself.
std::optional<double> bit_share(const Series& samples, std::uint64_t bit) {
    double set_ns = 0, total_ns = 0;
    std::int64_t set_count = 0, count = 0;
    for (std::size_t i = 0; i < samples.size(); ++i) {
        const auto& reasons = samples[i]->clock_event_reasons;
        if (!reasons) continue;
        ++count;
        set_count += (*reasons & bit) != 0 ? 1 : 0;
        if (i + 1 == samples.size()) continue;
        const auto dt = static_cast<double>(samples[i + 1]->t_ns - samples[i]->t_ns);
        total_ns += dt;
        if ((*reasons & bit) != 0) set_ns += dt;
    }
    if (count == 0) return std::nullopt;
    if (total_ns > 0) return set_ns / total_ns;
    return static_cast<double>(set_count) / static_cast<double>(count);
}

template <typename Sample, typename Get>
void mean_and_extremes(std::span<const Sample* const> samples, Get get, std::optional<double>* mean,
                       std::optional<double>* min, std::optional<double>* max) {
    double sum = 0;
    std::int64_t n = 0;
    for (const auto* s : samples) {
        const std::optional<double> v = get(*s);
        if (!v) continue;
        sum += *v;
        ++n;
        if (min) *min = std::min(min->value_or(*v), *v);
        if (max) *max = std::max(max->value_or(*v), *v);
    }
    if (mean && n > 0) *mean = sum / static_cast<double>(n);
}

void summarize_power(const std::map<int, Series>& series, TelemetrySummary& t) {
    // Power of the GPUs together: the sum of their means; the peak of the sums of their k-th samples
    // (each round reads every GPU once).
    std::vector<std::vector<double>> powers;
    for (const auto& [index, samples] : series) {
        std::vector<double> p;
        for (const auto* s : samples)
            if (const auto w = power_of(*s)) p.push_back(*w);
        if (!p.empty()) powers.push_back(std::move(p));
    }
    if (powers.empty()) return;
    double mean = 0;
    std::size_t rounds = powers.front().size();
    for (const auto& p : powers) {
        double sum = 0;
        for (const double w : p) sum += w;
        mean += sum / static_cast<double>(p.size());
        rounds = std::min(rounds, p.size());
    }
    t.mean_power_w = mean;
    for (std::size_t k = 0; k < rounds; ++k) {
        double total = 0;
        for (const auto& p : powers) total += p[k];
        t.max_power_w = std::max(t.max_power_w.value_or(total), total);
    }
}

void summarize_energy(const std::map<int, Series>& series, std::span<const GpuSample> all, std::int64_t inferences,
                      std::int64_t measure_wall_ns, std::optional<double> idle_power_w, TelemetrySummary& t) {
    std::optional<double> counter, integrated;
    bool every_counter = true;
    // The time the energy covers: the counter readings' span, or the samples' for integrated power.
    std::int64_t first_ns = INT64_MAX, last_ns = INT64_MIN;
    std::int64_t counter_first_ns = INT64_MAX, counter_last_ns = INT64_MIN;
    for (const auto& [index, samples] : series) {
        const auto c = counter_energy(samples, all);
        every_counter = every_counter && c.has_value();
        if (c) {
            counter = counter.value_or(0.0) + c->joules;
            counter_first_ns = std::min(counter_first_ns, c->first_ns);
            counter_last_ns = std::max(counter_last_ns, c->last_ns);
        }
        if (const auto i = integrated_energy_j(samples)) integrated = integrated.value_or(0.0) + *i;
        if (!samples.empty()) {
            first_ns = std::min(first_ns, samples.front()->t_ns);
            last_ns = std::max(last_ns, samples.back()->t_ns);
        }
    }
    if (every_counter && counter) {
        t.energy_j = counter;
        t.energy_source = "energy counter";
        first_ns = counter_first_ns;
        last_ns = counter_last_ns;
    } else if (integrated) {
        t.energy_j = integrated;
        t.energy_source = "integrated power";
    }
    if (!t.energy_j || *t.energy_j <= 0 || inferences <= 0) return;
    double counted = static_cast<double>(inferences);
    if (measure_wall_ns > 0 && last_ns > first_ns && last_ns - first_ns < measure_wall_ns)
        counted *= static_cast<double>(last_ns - first_ns) / static_cast<double>(measure_wall_ns);
    t.joules_per_inference = *t.energy_j / counted;
    t.inferences_per_joule = counted / *t.energy_j;
    if (!idle_power_w || last_ns <= first_ns) return;
    const double net_j = *t.energy_j - *idle_power_w * static_cast<double>(last_ns - first_ns) / 1e9;
    if (net_j > 0) t.joules_per_inference_net = net_j / counted;
}

void summarize_throttling(const std::map<int, Series>& series, TelemetrySummary& t) {
    for (const auto& reason : clock_event::reasons()) {
        if (!reason.throttles) continue;
        double worst = 0;
        for (const auto& [index, samples] : series) worst = std::max(worst, bit_share(samples, reason.bit).value_or(0.0));
        if (worst > 0) t.throttled.push_back({std::string(reason.name), worst});
    }
}

}  // namespace

TelemetrySummary summarize_telemetry(std::span<const GpuSample> gpu, std::span<const CpuSample> cpu,
                                     std::span<const TelemetrySource> sources, std::int64_t inferences,
                                     std::int64_t measure_wall_ns, std::optional<double> idle_power_w) {
    TelemetrySummary t;
    t.sources.assign(sources.begin(), sources.end());
    const auto series = measure_series(gpu);
    std::vector<const GpuSample*> all;
    for (const auto& [index, samples] : series) all.insert(all.end(), samples.begin(), samples.end());
    t.gpu_samples = static_cast<std::int64_t>(all.size());
    summarize_power(series, t);
    t.idle_power_w = idle_power_w;
    summarize_energy(series, gpu, inferences, measure_wall_ns, idle_power_w, t);
    summarize_throttling(series, t);
    const std::span<const GpuSample* const> g(all);
    mean_and_extremes(g, [](const GpuSample& s) { return s.sm_clock_mhz; }, &t.mean_sm_clock_mhz, &t.min_sm_clock_mhz, nullptr);
    mean_and_extremes(g, [](const GpuSample& s) { return s.gpu_util_pct; }, &t.mean_gpu_util_pct, nullptr, nullptr);
    mean_and_extremes(g, [](const GpuSample& s) { return s.temperature_c; }, nullptr, nullptr, &t.max_temperature_c);
    mean_and_extremes(g, [](const GpuSample& s) { return s.fb_used_mib; }, nullptr, nullptr, &t.peak_fb_used_mib);
    mean_and_extremes(g, [](const GpuSample& s) { return s.process_fb_mib; }, nullptr, nullptr, &t.peak_process_fb_mib);

    std::vector<const CpuSample*> measured_cpu;
    for (const auto& s : cpu)
        if (s.phase == SamplePhase::measure) measured_cpu.push_back(&s);
    t.cpu_samples = static_cast<std::int64_t>(measured_cpu.size());
    const std::span<const CpuSample* const> c(measured_cpu);
    mean_and_extremes(c, [](const CpuSample& s) { return s.process_cpu_pct; }, &t.mean_process_cpu_pct, nullptr, nullptr);
    // The high-water mark where the kernel reports it, else the largest resident set seen.
    mean_and_extremes(c, [](const CpuSample& s) { return s.process_peak_rss_mib ? s.process_peak_rss_mib : s.process_rss_mib; },
                      nullptr, nullptr, &t.peak_rss_mib);
    return t;
}

std::vector<GpuSample> benchmark_gpu_samples(std::span<const GpuSample> gpu, std::string_view device) {
    const auto parsed = parse_device(device);
    if (parsed && parsed->kind == DeviceKind::cuda) {
        std::vector<GpuSample> own;
        for (const auto& s : gpu)
            if (s.gpu_index == parsed->index) own.push_back(s);
        if (!own.empty()) return own;
    }
    return {gpu.begin(), gpu.end()};
}

bool source_concerns_device(std::string_view source, std::string_view device) {
    if (source != "nvml" && source != "nvidia-smi") return true;
    const auto parsed = parse_device(device);
    return parsed && parsed->kind == DeviceKind::cuda;
}

std::vector<std::string> telemetry_warnings(const TelemetrySummary& telemetry, std::span<const GpuSample> gpu) {
    constexpr double kLimit = 0.10;
    std::vector<std::string> warnings;
    std::vector<std::string> reasons;
    double worst = 0;
    for (const auto& share : telemetry.throttled) {
        if (share.share <= kLimit) continue;
        worst = std::max(worst, share.share);
        for (const auto& reason : clock_event::reasons())
            if (reason.name == share.reason) reasons.push_back(fmt::format("{} {:.0f}%", reason.label, share.share * 100));
    }
    if (!reasons.empty())
        warnings.push_back(fmt::format("GPU throttled for {:.0f}% of the measured time ({}): clocks were lowered",
                                       worst * 100, fmt::join(reasons, ", ")));
    // A clock that fell while the GPU idled (gpu_idle) was lowered by design, not by throttling.
    std::optional<double> highest, lowest_busy;
    for (const auto& s : gpu) {
        if (!s.sm_clock_mhz) continue;
        highest = std::max(highest.value_or(*s.sm_clock_mhz), *s.sm_clock_mhz);
        if (s.phase == SamplePhase::measure && !gpu_idle(s))
            lowest_busy = std::min(lowest_busy.value_or(*s.sm_clock_mhz), *s.sm_clock_mhz);
    }
    if (highest && lowest_busy && *lowest_busy < (1.0 - kLimit) * *highest)
        warnings.push_back(fmt::format("SM clock fell to {:.0f} MHz while measuring, {:.0f}% below the {:.0f} MHz seen in "
                                       "this benchmark",
                                       *lowest_busy, (1.0 - *lowest_busy / *highest) * 100, *highest));
    return warnings;
}

}  // namespace inferbench::analysis
