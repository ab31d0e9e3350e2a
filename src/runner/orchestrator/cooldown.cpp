#include "runner/orchestrator/cooldown.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/clock.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/plan/settings.hpp"
#include "core/time_units.hpp"

namespace inferbench::runner {
namespace {

// A fixed wait sleeps in slices this long, so that Ctrl-C is heard.
constexpr std::int64_t kSliceNs = 100'000'000;

const GpuMeans* find_gpu(const std::vector<GpuMeans>& readings, int index) {
    const auto it = std::find_if(readings.begin(), readings.end(), [index](const GpuMeans& m) { return m.index == index; });
    return it == readings.end() ? nullptr : &*it;
}

CooldownResult wait_fixed(std::int64_t ns, CooldownClock& clock, const std::function<bool()>& interrupted) {
    const std::int64_t begin = clock.now_ns();
    for (std::int64_t now = begin; now - begin < ns && !interrupted(); now = clock.now_ns())
        clock.sleep_ns(std::min(kSliceNs, ns - (now - begin)));
    return {clock.now_ns() - begin, std::nullopt, std::nullopt};
}

CooldownResult wait_until_idle(const CooldownRequest& request, GpuWindowReader& reader, CooldownClock& clock,
                               const std::function<bool()>& interrupted) {
    const GpuMeans* baseline = request.baseline ? request.baseline->gpu(request.gpu) : nullptr;
    const std::int64_t begin = clock.now_ns();
    CooldownResult result;
    while (!interrupted()) {
        const std::int64_t window_begin = clock.now_ns();
        const auto readings = reader.read(kCooldownWindowNs);
        // A reader that could not read the GPU may return at once: the window still takes its time.
        if (const std::int64_t spent = clock.now_ns() - window_begin; spent < kCooldownWindowNs)
            clock.sleep_ns(kCooldownWindowNs - spent);
        if (const GpuMeans* now = find_gpu(readings, request.gpu)) result.last = *now;
        if (baseline && result.last && near_idle(*result.last, *baseline)) {
            result.reached_idle = true;
            break;
        }
        if (clock.now_ns() - begin >= request.max_ns) {
            result.reached_idle = false;
            break;
        }
    }
    result.waited_ns = clock.now_ns() - begin;
    return result;
}

}  // namespace

bool near_idle(const GpuMeans& now, const GpuMeans& baseline) {
    bool judged = false;
    if (now.temperature_c && baseline.temperature_c) {
        if (*now.temperature_c > *baseline.temperature_c + kIdleTemperatureToleranceC) return false;
        judged = true;
    }
    if (now.power_w && baseline.power_w) {
        const double tolerance = std::max(kIdlePowerToleranceMinW, kIdlePowerToleranceFraction * *baseline.power_w);
        if (*now.power_w > *baseline.power_w + tolerance) return false;
        judged = true;
    }
    return judged;
}

std::int64_t SteadyCooldownClock::now_ns() { return monotonic_ns(); }
void SteadyCooldownClock::sleep_ns(std::int64_t ns) { std::this_thread::sleep_for(std::chrono::nanoseconds(ns)); }

CooldownResult cool_down(const CooldownRequest& request, GpuWindowReader& reader, CooldownClock& clock,
                         const std::function<bool()>& interrupted) {
    if (request.cooldown_ns == kCooldownUntilIdle) return wait_until_idle(request, reader, clock, interrupted);
    if (request.cooldown_ns <= 0) return {};
    return wait_fixed(request.cooldown_ns, clock, interrupted);
}

std::vector<store::Metric> cooldown_metrics(const CooldownResult& result) {
    std::vector<store::Metric> metrics = {{std::string(harness_metrics::kCooldownS), ns_to_s(result.waited_ns), "s"}};
    if (result.reached_idle)
        metrics.push_back({std::string(harness_metrics::kCooldownReachedIdle), *result.reached_idle ? 1.0 : 0.0, "flag"});
    if (result.last && result.last->power_w)
        metrics.push_back({std::string(harness_metrics::kCooldownEndPowerW), *result.last->power_w, "W"});
    if (result.last && result.last->temperature_c)
        metrics.push_back({std::string(harness_metrics::kCooldownEndTemperatureC), *result.last->temperature_c, "C"});
    return metrics;
}

}  // namespace inferbench::runner
