// The thermal side of a run, as the orchestrator drives it: the GPUs' idle baseline measured before the
// first cell (where the plan has a CUDA cell, GPU telemetry and idle_baseline above 0), then the plan's
// cooldown before every cell that runs after another one ran.
#pragma once

#include <optional>
#include <vector>

#include "core/idle_baseline.hpp"
#include "core/plan/plan.hpp"
#include "runner/orchestrator/cooldown.hpp"
#include "runner/orchestrator/telemetry_recorder.hpp"
#include "store/results_store.hpp"

namespace inferbench::runner {

class ThermalConditions {
public:
    ThermalConditions(const RunSettings& settings, TelemetryRecorder& telemetry);

    // Measures the baseline where `cells` need it: what the run stores (nullopt: no CUDA cell, or
    // idle_baseline 0); with `unavailable` set where it could not be measured.
    std::optional<IdleBaseline> measure_baseline(const std::vector<BenchmarkSpec>& cells);
    // Before a cell that is about to run: the cooldown, as the metrics to store with it (none before the
    // first cell that runs, nor without a cooldown).
    std::vector<store::Metric> before_cell(const BenchmarkSpec& spec);
    // A lane's conditions take the run's baseline, measured once before every lane starts.
    void use_baseline(const std::optional<IdleBaseline>& baseline) { baseline_ = baseline; }

private:
    const RunSettings& settings_;
    TelemetryRecorder& telemetry_;
    std::optional<IdleBaseline> baseline_;
    bool cell_ran_ = false;
};

}  // namespace inferbench::runner
