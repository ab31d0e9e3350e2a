// What a summary row needs to describe itself away from its database: the run it belongs to, the
// device by name, and the measurement settings its cell ran with (for exports and for `compare`,
// which warns when the sides of a row ran with different settings).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/idle_baseline.hpp"
#include "core/spec.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

// What a run recorded of one of its GPUs (its environment): the clock throttle_threshold is a fraction
// of, and the idle baseline measured before the run's first CUDA cell.
struct GpuFacts {
    std::optional<double> default_clock_mhz;  // gpus.devices[].default_applications_clock_mhz
    std::optional<GpuMeans> idle;             // idle_baseline.gpus[]
    std::string driver_version;               // gpus.devices[].driver_version; empty where not recorded
};

struct RunContext {
    std::int64_t started_unix_ms = 0;  // the run's start
    std::string host;
    std::string device_name;  // "NVIDIA H200", the CPU model, else the device string
    std::map<int, GpuFacts> gpus;  // by GPU index
};

// The settings of one cell as stored with it (benchmarks.settings_json, read here only); unset where
// the cell did not store them (imported logs).
struct CellSettings {
    std::optional<std::int64_t> warmup_ns, warmup_iterations, duration_ns, min_iterations, max_iterations;
    // The stopping criterion and the settings it reads, for people: "fixed", "stdrel (max_noise 0.5%,
    // min_time 500ms, stop_timeout 15s)"; empty where the cell did not store it (imported logs).
    std::string stop;
    StopCriterion criterion = StopCriterion::fixed;
    std::string backend_options;  // compact JSON, empty when none
    OptionMap backend_option_values;           // the same, by option
    std::vector<std::string> gpu_names;        // an imported log's GPU(s)
    std::vector<std::string> imported_warnings;  // what the importing tool warned of (trtexec's warnings), and the import's notes on its figures
    std::optional<MeasureConditions> conditions;  // throttle policy, L2 flush, sync; unset where not stored
    std::string inputs;                           // the plan's input files; empty: seeded random inputs
    std::optional<std::uint64_t> seed;            // of the random inputs; unset where not stored (imported logs)
};

// The device a benchmark ran on, by name: for cuda devices the GPU's name (from an imported log's
// settings, else the run's environment, gpus.devices[].name), for cpu the CPU model, else the device.
std::string device_name(const nlohmann::json& environment, const store::BenchmarkRecord& benchmark);

RunContext run_context(const store::RunRecord& run, const store::BenchmarkRecord& benchmark);

// Each GPU's facts in a run's environment (those it lists or has a baseline of).
std::map<int, GpuFacts> gpu_facts(const nlohmann::json& environment);

CellSettings cell_settings(const store::BenchmarkRecord& benchmark);

}  // namespace inferbench::analysis
