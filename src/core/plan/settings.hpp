// Run settings: one struct with documented defaults is the single source of truth. The field table
// below drives the plan parser, `--set key=value`, `--help` and the plan echo stored with each run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/plan/loop_settings.hpp"
#include "core/plan/scenario_settings.hpp"
#include "core/plan/shard.hpp"

namespace inferbench {

// The longest text a plan may give one name, path or other text value, in bytes (PATH_MAX): far above
// any real name or path, and a bound on what every table, report and query that shows it must carry.
inline constexpr std::size_t kMaxTextBytes = 4096;

struct RunSettings {
    std::string name = "inferbench";                 // test id, stored with the run
    LoopSettings loop;                               // warm-up and measured loop, the same struct every cell carries
    ScenarioSettings scenario;                       // the load the cells run under, the same struct every cell carries
    std::int64_t timeout_ns = 600'000'000'000;       // per benchmark, load included; then it is killed
    std::int64_t seed = 42;                          // random inputs and zoo weights
    std::string output_dir = "inferbench-results";   // results database and reports
    std::string db;                                  // empty: <output_dir>/results.db
    std::string model_cache;                         // empty: $XDG_CACHE_HOME/inferbench/models
    std::string inputs;                              // empty: seeded random inputs; else files (backends/input_files)
    bool telemetry_enabled = true;                   // sample GPUs, the worker's CPU and memory, the host
    std::int64_t telemetry_rate_hz = 10;             // samples per second, 1..100
    std::string telemetry_gpu = "auto";              // auto (NVML, else nvidia-smi), nvml, nvidia-smi, off
    // Throttling and thermal state: how throttled iterations count (core/plan/measure_conditions), the wait
    // between cells and the idle baseline it waits for (runner/orchestrator/cooldown, runner/orchestrator/idle_baseline).
    double throttle_threshold = 0.75;                // flagged below this x the GPU's default applications clock
    std::string throttle_policy = "flag";            // keep, flag, discard
    std::int64_t cooldown_ns = 0;                    // between cells; kCooldownUntilIdle: until near the idle baseline
    std::int64_t cooldown_max_ns = 120'000'000'000;  // the longest a cooldown until idle waits
    std::int64_t idle_baseline_ns = 3'000'000'000;   // GPU power and temperature measured this long before the first cell
    // Cold and warm: the GPU's L2 flushed between iterations, and how the CPU waits for the GPU.
    bool l2_flush = false;
    std::string sync = "auto";                       // auto, spin, yield, blocking
    std::int64_t repeats = 1;                        // every cell this many times, interleaved (A B C A B C)
    // sequential: one benchmark at a time; per_device: one worker per device at once (runner/orchestrator/lanes).
    std::string parallel = "sequential";
    std::string sampling = "greedy";                 // generative cells' next token: greedy, seeded (core/generation)
    std::optional<Shard> shard;                      // only this part of the plan's cells (core/plan/shard); unset: all
};

// parallel: per_device, RunSettings::parallel's other value than sequential.
inline constexpr std::string_view kParallelPerDevice = "per_device";

// cooldown: idle, stored in RunSettings::cooldown_ns in place of a duration.
inline constexpr std::int64_t kCooldownUntilIdle = -1;

// fraction: a number above 0 and at most 1, written 0.75 or 75%; real: a plain decimal number; percent: a
// number with a % sign ("0.5%"), held as the percent (0.5).
enum class FieldType { duration, count, text, flag, choice, fraction, real, percent };

// The bounds of a real or percent field, in its own unit; the minimum itself is refused where
// min_exclusive (a noise of 0% can never be reached).
struct RealRange {
    double min = 0, max = 0;
    bool min_exclusive = false;
};

struct SettingField {
    std::string_view key;
    FieldType type;
    std::string_view help;
    // A loop setting is a member of RunSettings::loop, a scenario setting of RunSettings::scenario, the
    // others of RunSettings itself.
    std::variant<std::int64_t RunSettings::*, std::int64_t LoopSettings::*, std::string RunSettings::*,
                 bool RunSettings::*, double RunSettings::*, double LoopSettings::*, StopCriterion LoopSettings::*,
                 std::int64_t ScenarioSettings::*, double ScenarioSettings::*, bool ScenarioSettings::*,
                 Scenario ScenarioSettings::*, std::optional<Shard> RunSettings::*>
        member;
    std::int64_t min_value = 0;  // for counts and durations
    std::int64_t max_value = INT64_MAX;
    std::string_view choices = {};  // for choices: "a, b, c"
    // For a duration: a word taken in its place, stored as `word_value` (cooldown: idle).
    std::string_view word = {};
    std::int64_t word_value = 0;
    RealRange real = {};            // for reals and percents
};

const std::vector<SettingField>& setting_fields();
const SettingField* find_setting(std::string_view key);

// Sets a field from its textual form; returns what is wrong, or nothing on success.
std::optional<std::string> set_setting(RunSettings& settings, const SettingField& field, std::string_view text);
std::string setting_text(const RunSettings& settings, const SettingField& field);
std::string_view type_name(FieldType type);

// The settings a plan may give as a list, each value a cell of its own (a sweep axis like the batch sizes):
// the load scenarios' numbers, where perf_analyzer and LoadGen users sweep (concurrency 1,2,4; target_qps
// 10,20,40), and the streams, latency bound, samples per query and batcher delay beside them. Not the scenario
// itself nor find_peak and batcher (each changes which other settings apply), nor the loop and run settings.
inline constexpr std::string_view kSweepableSettings[] = {"target_qps",   "concurrency",      "streams",
                                                          "latency_bound", "samples_per_query", "max_queue_delay"};
bool is_sweepable(std::string_view key);

// Copies one setting's value from `from` into `to`, whatever its type (a swept value into its cell's settings).
void copy_setting(RunSettings& to, const RunSettings& from, const SettingField& field);

// The database path with defaults applied.
std::string resolved_db_path(const RunSettings& settings);
std::string resolved_model_cache(const RunSettings& settings);

}  // namespace inferbench
