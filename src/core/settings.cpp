#include "core/settings.hpp"

#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench {
namespace {

// Bounds that catch typos (an extra digit or two) before hours are spent. The iteration bound is the
// orchestrator's trace capacity when max_iterations is 0 (no limit), 56 bytes per iteration.
constexpr std::int64_t kSecondNs = 1'000'000'000;
constexpr std::int64_t kMaxWarmupNs = 3600 * kSecondNs;        // 1h
constexpr std::int64_t kMaxDurationNs = 24 * 3600 * kSecondNs;  // 24h
constexpr std::int64_t kMaxTimeoutNs = 168 * 3600 * kSecondNs;  // a week
constexpr std::int64_t kMaxIterations = 100'000'000;
// The load scenarios' bounds: beyond them a value is a typo, or more threads and instances than a host runs.
constexpr std::int64_t kMaxQps = 100'000'000;
constexpr std::int64_t kMaxLatencyBoundNs = 3600 * kSecondNs;  // 1h
constexpr std::int64_t kMaxSamplesPerQuery = 65536;
constexpr std::int64_t kMaxConcurrency = 4096;
constexpr std::int64_t kMaxStreams = 64;
constexpr std::int64_t kMaxQueueDelayNs = 10 * kSecondNs;

// YAML's and the command line's spellings of a yes/no value.
std::optional<bool> parse_flag(std::string_view text) {
    for (std::string_view yes : {"true", "yes", "on", "1"})
        if (text == yes) return true;
    for (std::string_view no : {"false", "no", "off", "0"})
        if (text == no) return false;
    return std::nullopt;
}

// The number a count or duration field names, in RunSettings, its loop or its scenario settings;
// `Settings` is RunSettings or const RunSettings.
template <typename Settings>
auto& number_of(Settings& settings, const SettingField& field) {
    if (const auto* loop_member = std::get_if<std::int64_t LoopSettings::*>(&field.member))
        return settings.loop.*(*loop_member);
    if (const auto* scenario_member = std::get_if<std::int64_t ScenarioSettings::*>(&field.member))
        return settings.scenario.*(*scenario_member);
    return settings.*std::get<std::int64_t RunSettings::*>(field.member);
}

// The yes/no a flag field names, in RunSettings or its scenario settings, or null for other fields.
template <typename Settings>
auto* flag_of(Settings& settings, const SettingField& field) {
    if (const auto* member = std::get_if<bool ScenarioSettings::*>(&field.member)) return &(settings.scenario.*(*member));
    const auto* member = std::get_if<bool RunSettings::*>(&field.member);
    return member ? &(settings.*(*member)) : nullptr;
}

// A real number (queries per second): above 0 and at most the field's maximum.
std::optional<std::string> set_number(RunSettings& settings, const SettingField& field, std::string_view text) {
    const auto value = parse_double(text);
    if (!value || !std::isfinite(*value))
        return fmt::format("{}: '{}' is not a number; write e.g. 1500 or 2.5", field.key, text);
    if (*value <= 0) return fmt::format("{}: '{}' must be above 0", field.key, text);
    if (*value > static_cast<double>(field.max_value))
        return fmt::format("{}: '{}' is above the maximum {}", field.key, text, field.max_value);
    settings.scenario.*std::get<double ScenarioSettings::*>(field.member) = *value;
    return std::nullopt;
}

// Which load a cell runs under: one of the scenario names.
std::optional<std::string> set_scenario(RunSettings& settings, const SettingField& field, std::string_view text) {
    const auto scenario = parse_scenario(text);
    if (!scenario) return fmt::format("{}: unknown value '{}'; valid choices: {}", field.key, text, field.choices);
    settings.scenario.*std::get<Scenario ScenarioSettings::*>(field.member) = *scenario;
    return std::nullopt;
}

bool is_choice(std::string_view choices, std::string_view text) {
    for (const auto& choice : split_list(choices))
        if (choice == text) return true;
    return false;
}

}  // namespace

const std::vector<SettingField>& setting_fields() {
    static const std::vector<SettingField> fields = {
        {"name", FieldType::text, "test id stored with the run", &RunSettings::name},
        {"warmup", FieldType::duration, "minimum warm-up time before measuring (up to 1h)", &LoopSettings::warmup_ns,
         0, kMaxWarmupNs},
        {"warmup_iterations", FieldType::count, "minimum warm-up iterations (up to 100000000)",
         &LoopSettings::warmup_iterations, 0, kMaxIterations},
        {"duration", FieldType::duration, "minimum measured time per benchmark (up to 24h)",
         &LoopSettings::duration_ns, 1, kMaxDurationNs},
        {"min_iterations", FieldType::count, "minimum measured iterations per benchmark (up to max_iterations)",
         &LoopSettings::min_iterations, 1, kMaxIterations},
        {"max_iterations", FieldType::count, "measured iterations stop here (0: no limit; up to 100000000)",
         &LoopSettings::max_iterations, 0, kMaxIterations},
        {"timeout", FieldType::duration, "a benchmark still running after this is killed and failed (up to 168h)",
         &RunSettings::timeout_ns, 1, kMaxTimeoutNs},
        {"seed", FieldType::count, "seed of the random inputs and zoo weights", &RunSettings::seed},
        {"output_dir", FieldType::text, "folder for the results database and reports",
         &RunSettings::output_dir},
        {"db", FieldType::text, "results database (default <output_dir>/results.db)", &RunSettings::db},
        {"model_cache", FieldType::text, "folder of exported zoo models (default ~/.cache/inferbench/models)",
         &RunSettings::model_cache},
        {"telemetry_enabled", FieldType::flag, "sample GPU power/clocks/heat, the worker's CPU and memory, the host",
         &RunSettings::telemetry_enabled},
        {"telemetry_rate_hz", FieldType::count, "telemetry samples per second (1-100)", &RunSettings::telemetry_rate_hz, 1,
         100},
        {"telemetry_gpu", FieldType::choice, "GPU telemetry: auto (NVML, else nvidia-smi), nvml, nvidia-smi, off",
         &RunSettings::telemetry_gpu, 0, 0, "auto, nvml, nvidia-smi, off"},
        {"scenario", FieldType::choice,
         "load (LoadGen's names): single_stream (one query at a time), multi_stream (queries of samples_per_query), "
         "server (Poisson arrivals at target_qps), offline (everything at once), concurrency (N in flight)",
         &ScenarioSettings::scenario, 0, 0, "single_stream, multi_stream, server, offline, concurrency"},
        {"target_qps", FieldType::number, "server: mean arrival rate, queries per second (above 0)",
         &ScenarioSettings::target_qps, 0, kMaxQps},
        {"latency_bound", FieldType::duration, "server: the p99 latency a VALID run stays within (up to 1h)",
         &ScenarioSettings::latency_bound_ns, 1, kMaxLatencyBoundNs},
        {"samples_per_query", FieldType::count, "multi_stream: samples per query, a multiple of the batch size",
         &ScenarioSettings::samples_per_query, 1, kMaxSamplesPerQuery},
        {"concurrency", FieldType::count, "concurrency: queries in flight (1-4096)", &ScenarioSettings::concurrency, 1,
         kMaxConcurrency},
        {"streams", FieldType::count, "backend instances serving queries, each on its own thread (1-64)",
         &ScenarioSettings::streams, 1, kMaxStreams},
        {"find_peak", FieldType::flag, "server: search the highest target_qps whose p99 meets latency_bound",
         &ScenarioSettings::find_peak},
        {"batcher", FieldType::flag, "server, concurrency: batch queued queries, up to the batch size, per inference",
         &ScenarioSettings::batcher},
        {"max_queue_delay", FieldType::duration, "batcher: the longest a query waits for its batch to fill",
         &ScenarioSettings::batcher_max_queue_delay_ns, 0, kMaxQueueDelayNs},
    };
    return fields;
}

const SettingField* find_setting(std::string_view key) {
    for (const auto& field : setting_fields()) {
        if (field.key == key) return &field;
    }
    return nullptr;
}

std::string_view type_name(FieldType type) {
    switch (type) {
        case FieldType::duration: return "duration";
        case FieldType::count: return "count";
        case FieldType::text: return "text";
        case FieldType::flag: return "bool";
        case FieldType::choice: return "choice";
        case FieldType::number: return "number";
    }
    return "?";
}

std::optional<std::string> set_setting(RunSettings& settings, const SettingField& field, std::string_view text) {
    if (bool* flag = flag_of(settings, field)) {
        const auto value = parse_flag(text);
        if (!value) return fmt::format("{}: '{}' is not true or false", field.key, text);
        *flag = *value;
        return std::nullopt;
    }
    if (field.type == FieldType::number) return set_number(settings, field, text);
    if (std::holds_alternative<Scenario ScenarioSettings::*>(field.member)) return set_scenario(settings, field, text);
    if (const auto* text_member = std::get_if<std::string RunSettings::*>(&field.member)) {
        if (field.type == FieldType::choice && !is_choice(field.choices, text))
            return fmt::format("{}: unknown value '{}'; valid choices: {}", field.key, text, field.choices);
        settings.*(*text_member) = std::string(text);
        return std::nullopt;
    }
    std::optional<std::int64_t> value;
    std::string why;
    if (field.type == FieldType::duration) {
        value = parse_duration_ns(text, &why);
        if (!value) return fmt::format("{}: {}", field.key, why);
    } else {
        value = parse_int(text);
        if (!value) return fmt::format("{}: '{}' is not a whole number", field.key, text);
    }
    if (*value < field.min_value) {
        return fmt::format("{}: '{}' is below the minimum {}", field.key, text,
                           field.type == FieldType::duration ? format_duration(field.min_value)
                                                             : std::to_string(field.min_value));
    }
    if (*value > field.max_value) {
        return fmt::format("{}: '{}' is above the maximum {}", field.key, text,
                           field.type == FieldType::duration ? format_duration(field.max_value)
                                                             : std::to_string(field.max_value));
    }
    number_of(settings, field) = *value;
    return std::nullopt;
}

std::string setting_text(const RunSettings& settings, const SettingField& field) {
    if (const bool* flag = flag_of(settings, field)) return *flag ? "true" : "false";
    if (const auto* number = std::get_if<double ScenarioSettings::*>(&field.member))
        return fmt::format("{}", settings.scenario.*(*number));
    if (const auto* scenario = std::get_if<Scenario ScenarioSettings::*>(&field.member))
        return std::string(to_string(settings.scenario.*(*scenario)));
    if (const auto* text_member = std::get_if<std::string RunSettings::*>(&field.member))
        return settings.*(*text_member);
    const std::int64_t value = number_of(settings, field);
    return field.type == FieldType::duration ? format_duration(value) : std::to_string(value);
}

std::string resolved_db_path(const RunSettings& settings) {
    return settings.db.empty() ? settings.output_dir + "/results.db" : settings.db;
}

std::string resolved_model_cache(const RunSettings& settings) {
    if (!settings.model_cache.empty()) return settings.model_cache;
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/inferbench/models";
    if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/inferbench/models";
    return settings.output_dir + "/models";
}

}  // namespace inferbench
