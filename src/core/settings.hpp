// Run settings: one struct with documented defaults is the single source of truth. The field table
// below drives the plan parser, `--set key=value`, `--help` and the plan echo stored with each run.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/loop_settings.hpp"
#include "core/scenario_settings.hpp"

namespace inferbench {

struct RunSettings {
    std::string name = "inferbench";                 // test id, stored with the run
    LoopSettings loop;                               // warm-up and measured loop, the same struct every cell carries
    ScenarioSettings scenario;                       // the load the cells run under, the same struct every cell carries
    std::int64_t timeout_ns = 600'000'000'000;       // per benchmark, load included; then it is killed
    std::int64_t seed = 42;                          // random inputs and zoo weights
    std::string output_dir = "inferbench-results";   // results database and reports
    std::string db;                                  // empty: <output_dir>/results.db
    std::string model_cache;                         // empty: $XDG_CACHE_HOME/inferbench/models
    bool telemetry_enabled = true;                   // sample GPUs, the worker's CPU and memory, the host
    std::int64_t telemetry_rate_hz = 10;             // samples per second, 1..100
    std::string telemetry_gpu = "auto";              // auto (NVML, else nvidia-smi), nvml, nvidia-smi, off
};

enum class FieldType { duration, count, text, flag, choice, number };

struct SettingField {
    std::string_view key;
    FieldType type;
    std::string_view help;
    // A loop setting is a member of RunSettings::loop, a scenario setting of RunSettings::scenario, the
    // others of RunSettings itself.
    std::variant<std::int64_t RunSettings::*, std::int64_t LoopSettings::*, std::string RunSettings::*,
                 bool RunSettings::*, std::int64_t ScenarioSettings::*, double ScenarioSettings::*,
                 bool ScenarioSettings::*, Scenario ScenarioSettings::*>
        member;
    std::int64_t min_value = 0;  // for counts and durations; a number (real) must be above 0
    std::int64_t max_value = INT64_MAX;  // for counts, durations and numbers
    std::string_view choices = {};  // for choices: "a, b, c"
};

const std::vector<SettingField>& setting_fields();
const SettingField* find_setting(std::string_view key);

// Sets a field from its textual form; returns what is wrong, or nothing on success.
std::optional<std::string> set_setting(RunSettings& settings, const SettingField& field, std::string_view text);
std::string setting_text(const RunSettings& settings, const SettingField& field);
std::string_view type_name(FieldType type);

// The database path with defaults applied.
std::string resolved_db_path(const RunSettings& settings);
std::string resolved_model_cache(const RunSettings& settings);

}  // namespace inferbench
