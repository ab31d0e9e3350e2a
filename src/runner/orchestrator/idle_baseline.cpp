#include "runner/orchestrator/idle_baseline.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/units.hpp"

namespace inferbench::runner {
namespace {

struct Mean {
    double sum = 0;
    std::int64_t n = 0;
    void add(const std::optional<double>& v) {
        if (!v) return;
        sum += *v;
        ++n;
    }
    std::optional<double> value() const { return n > 0 ? std::optional<double>(sum / static_cast<double>(n)) : std::nullopt; }
};

constexpr std::int64_t kInterruptCheckNs = 50'000'000;

}  // namespace

std::vector<GpuMeans> window_means(std::span<const GpuSample> samples) {
    struct Sums {
        Mean power, temperature, util;
        std::int64_t samples = 0;
    };
    std::map<int, Sums> by_gpu;
    for (const auto& s : samples) {
        Sums& sums = by_gpu[s.gpu_index];
        sums.power.add(s.power_w ? s.power_w : s.power_avg_w);
        sums.temperature.add(s.temperature_c);
        sums.util.add(s.gpu_util_pct);
        ++sums.samples;
    }
    std::vector<GpuMeans> means;
    for (const auto& [index, sums] : by_gpu) {
        GpuMeans m{index, sums.power.value(), sums.temperature.value(), sums.util.value(), sums.samples};
        if (m.power_w || m.temperature_c) means.push_back(m);
    }
    return means;
}

IdleBaseline measure_idle_baseline(GpuWindowReader& reader, std::int64_t duration_ns) {
    IdleBaseline baseline;
    baseline.measured_ns = duration_ns;
    baseline.gpus = reader.read(duration_ns);
    if (baseline.gpus.empty())
        baseline.unavailable = fmt::format("no GPU gave a power or temperature reading in {}", format_duration(duration_ns));
    return baseline;
}

SamplerWindowReader::SamplerWindowReader(const telemetry::GpuAccess& gpu, double rate_hz,
                                         std::function<bool()> interrupted, std::optional<std::vector<int>> gpus)
    : gpu_(gpu), rate_hz_(rate_hz), interrupted_(std::move(interrupted)), gpus_(std::move(gpus)) {}

std::vector<GpuMeans> SamplerWindowReader::read(std::int64_t window_ns) {
    telemetry::SamplerOptions options;
    options.rate_hz = rate_hz_;
    options.expected_ns = window_ns;
    options.gpus = gpus_;
    telemetry::Sampler sampler(gpu_, options);
    sampler.start(getpid());
    const std::int64_t end = monotonic_ns() + window_ns;
    for (std::int64_t now = monotonic_ns(); now < end && !(interrupted_ && interrupted_()); now = monotonic_ns())
        std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(kInterruptCheckNs, end - now)));
    const auto result = sampler.stop();
    return window_means(result.gpu);
}

}  // namespace inferbench::runner
