// The wait between cells (the plan's `cooldown`): a fixed time, or until the cell's GPU is back near the
// idle baseline measured before the run, within cooldown_max. The clock and the GPU readings come from
// outside, so tests drive it without waiting.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/idle_baseline.hpp"
#include "runner/orchestrator/idle_baseline.hpp"
#include "store/results_store.hpp"

namespace inferbench::runner {

// "Near idle": the GPU's temperature at most 3 °C above the baseline's, and its power at most 10% (and at
// least 10 W) above it. What the baseline or the reading lacks is not judged; a GPU with neither reading
// is never near.
inline constexpr double kIdleTemperatureToleranceC = 3.0;
inline constexpr double kIdlePowerToleranceFraction = 0.10;
inline constexpr double kIdlePowerToleranceMinW = 10.0;
// How long each reading of a cooldown until idle samples the GPU.
inline constexpr std::int64_t kCooldownWindowNs = 1'000'000'000;

bool near_idle(const GpuMeans& now, const GpuMeans& baseline);

class CooldownClock {
public:
    virtual ~CooldownClock() = default;
    virtual std::int64_t now_ns() = 0;
    virtual void sleep_ns(std::int64_t ns) = 0;
};

// CLOCK_MONOTONIC and a real sleep.
class SteadyCooldownClock final : public CooldownClock {
public:
    std::int64_t now_ns() override;
    void sleep_ns(std::int64_t ns) override;
};

struct CooldownRequest {
    std::int64_t cooldown_ns = 0;             // a time, or kCooldownUntilIdle
    std::int64_t max_ns = 0;                  // cooldown_max: the longest wait until idle
    int gpu = 0;                              // the cell's GPU
    const IdleBaseline* baseline = nullptr;   // the run's; none: never known to be near idle
};

struct CooldownResult {
    std::int64_t waited_ns = 0;
    std::optional<bool> reached_idle;  // until idle only: false where cooldown_max passed first
    std::optional<GpuMeans> last;      // until idle: the GPU's last reading
};

// Waits as `request` says; stops early (reached_idle unset) when `interrupted` says so.
CooldownResult cool_down(const CooldownRequest& request, GpuWindowReader& reader, CooldownClock& clock,
                         const std::function<bool()>& interrupted);

// The result as the benchmark's metrics (core/metrics/harness_metrics).
std::vector<store::Metric> cooldown_metrics(const CooldownResult& result);

}  // namespace inferbench::runner
