#include "core/plan/settings.hpp"

#include <algorithm>
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
constexpr std::int64_t kMaxCooldownNs = 3600 * kSecondNs;      // 1h
constexpr std::int64_t kMaxIdleBaselineNs = 60 * kSecondNs;    // 1m
constexpr std::int64_t kMaxRepeats = 1000;
// The load scenarios' bounds: beyond them a value is a typo, or more threads and instances than a host runs.
constexpr double kMaxQps = 100'000'000;
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

// The real number a real or percent field names, in the loop or the scenario settings.
template <typename Settings>
auto& real_of(Settings& settings, const SettingField& field) {
    if (const auto* scenario_member = std::get_if<double ScenarioSettings::*>(&field.member))
        return settings.scenario.*(*scenario_member);
    return settings.loop.*std::get<double LoopSettings::*>(field.member);
}

// A real or percent field's value from its text, within its range; else what is wrong.
std::optional<std::string> set_real(RunSettings& settings, const SettingField& field, std::string_view text) {
    std::string_view number = trim(text);
    const bool percent = field.type == FieldType::percent;
    if (percent) {
        if (!number.ends_with('%'))
            return fmt::format("{}: '{}' has no % sign; write a percentage, e.g. {}%", field.key, text,
                               field.real.max >= 1 ? "0.5" : "0.05");
        number = trim(number.substr(0, number.size() - 1));
    }
    const auto value = parse_double(number);
    const std::string_view unit = percent ? "%" : "";
    if (!value || !std::isfinite(*value))
        return fmt::format("{}: '{}' is not a number{}", field.key, text, percent ? " of percent" : "");
    if (field.real.min_exclusive ? *value <= field.real.min : *value < field.real.min)
        return fmt::format("{}: '{}' must be {} {:g}{}", field.key, text,
                           field.real.min_exclusive ? "above" : "at least", field.real.min, unit);
    if (*value > field.real.max)
        return fmt::format("{}: '{}' is above the maximum {:g}{}", field.key, text, field.real.max, unit);
    real_of(settings, field) = *value;
    return std::nullopt;
}

bool is_choice(std::string_view choices, std::string_view text) {
    for (const auto& choice : split_list(choices))
        if (choice == text) return true;
    return false;
}

// "0.75" or "75%": above 0 and at most 1.
std::optional<double> parse_fraction(std::string_view text) {
    const bool percent = text.ends_with('%');
    auto value = parse_double(trim(percent ? text.substr(0, text.size() - 1) : text));
    if (value && percent) *value /= 100;
    if (!value || !(*value > 0 && *value <= 1)) return std::nullopt;
    return value;
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
        {"inputs", FieldType::text,
         "the models' inputs from files: an .npz, an .npy or a folder of them, cycled (default: seeded random)",
         &RunSettings::inputs},
        {"model_cache", FieldType::text, "folder of exported zoo models (default ~/.cache/inferbench/models)",
         &RunSettings::model_cache},
        {"telemetry_enabled", FieldType::flag, "sample GPU power/clocks/heat, the worker's CPU and memory, the host",
         &RunSettings::telemetry_enabled},
        {"telemetry_rate_hz", FieldType::count, "telemetry samples per second (1-100)", &RunSettings::telemetry_rate_hz, 1,
         100},
        {"telemetry_gpu", FieldType::choice, "GPU telemetry: auto (NVML, else nvidia-smi), nvml, nvidia-smi, off",
         &RunSettings::telemetry_gpu, 0, 0, "auto, nvml, nvidia-smi, off"},
        {"throttle_threshold", FieldType::fraction,
         "an iteration is flagged throttled where the SM clock was below this x the GPU's default applications clock",
         &RunSettings::throttle_threshold},
        {"throttle_policy", FieldType::choice,
         "throttled iterations: keep (not flagged), flag (share shown), discard (left out of the statistics)",
         &RunSettings::throttle_policy, 0, 0, "keep, flag, discard"},
        {"cooldown", FieldType::duration, "wait between cells: a time (up to 1h), or idle (GPU back near its idle baseline)",
         &RunSettings::cooldown_ns, 0, kMaxCooldownNs, {}, "idle", kCooldownUntilIdle},
        {"cooldown_max", FieldType::duration, "the longest cooldown: idle waits before the cell runs anyway (up to 1h)",
         &RunSettings::cooldown_max_ns, kSecondNs, kMaxCooldownNs},
        {"idle_baseline", FieldType::duration,
         "GPU idle power and temperature measured this long before the first CUDA cell (0: not measured; up to 1m)",
         &RunSettings::idle_baseline_ns, 0, kMaxIdleBaselineNs},
        {"l2_flush", FieldType::flag, "flush the GPU's L2 cache between iterations, untimed (cold runs; CUDA cells)",
         &RunSettings::l2_flush},
        {"sync", FieldType::choice, "how the CPU waits for the GPU: auto (the driver's choice), spin, yield, blocking",
         &RunSettings::sync, 0, 0, "auto, spin, yield, blocking"},
        {"stop", FieldType::choice, "when the measured loop ends: fixed (duration), stdrel or entropy (nvbench's criteria)",
         &LoopSettings::stop, 0, 0, "fixed, stdrel, entropy"},
        {"max_noise", FieldType::percent, "stdrel: stop once the iterations' relative stdev is below this",
         &LoopSettings::max_noise_pct, 0, 0, {}, {}, 0, {0, 100, true}},
        {"min_time", FieldType::duration, "stdrel: summed iteration time before it may stop (up to 24h)",
         &LoopSettings::min_time_ns, 0, kMaxDurationNs},
        {"stop_timeout", FieldType::duration, "stdrel, entropy: give up (not converged) after measuring this long",
         &LoopSettings::stop_timeout_ns, 1, kMaxDurationNs},
        {"max_angle", FieldType::real, "entropy: steepest slope of the entropy's linear fit, degrees",
         &LoopSettings::max_angle_deg, 0, 0, {}, {}, 0, {0, 90, true}},
        {"min_r2", FieldType::real, "entropy: least R² of the entropy's linear fit (0-1)", &LoopSettings::min_r2, 0, 0,
         {}, {}, 0, {0, 1, false}},
        {"shard", FieldType::text,
         "K/N: run only the K-th of N parts of the plan's cells (a host's or Slurm task's share); empty: every cell",
         &RunSettings::shard},
        {"repeats", FieldType::count, "run every cell this many times, interleaved across cells (A B C A B C)",
         &RunSettings::repeats, 1, kMaxRepeats},
        {"parallel", FieldType::choice,
         "sequential (one benchmark at a time) or per_device (the cells of each device in a worker of their own, "
         "every device at once, each worker pinned to the CPUs nearest its GPU)",
         &RunSettings::parallel, 0, 0, "sequential, per_device"},
        {"sampling", FieldType::choice,
         "generative models' next token: greedy (the most likely; the same tokens on every engine at fp32) or seeded "
         "(drawn from the softmax with the plan's seed)",
         &RunSettings::sampling, 0, 0, "greedy, seeded"},
        {"scenario", FieldType::choice,
         "load (LoadGen's names): single_stream (one query at a time), multi_stream (queries of samples_per_query), "
         "server (Poisson arrivals at target_qps), offline (everything at once), concurrency (N in flight)",
         &ScenarioSettings::scenario, 0, 0, "single_stream, multi_stream, server, offline, concurrency"},
        {"target_qps", FieldType::real, "server: mean arrival rate, queries per second (above 0; a list sweeps it, e.g. 10,20,40)",
         &ScenarioSettings::target_qps, 0, 0, {}, {}, 0, {0, kMaxQps, true}},
        {"latency_bound", FieldType::duration, "server: the p99 latency a VALID run stays within (up to 1h; a list sweeps it)",
         &ScenarioSettings::latency_bound_ns, 1, kMaxLatencyBoundNs},
        {"samples_per_query", FieldType::count, "multi_stream: samples per query, a multiple of the batch size (a list sweeps it)",
         &ScenarioSettings::samples_per_query, 1, kMaxSamplesPerQuery},
        {"concurrency", FieldType::count, "concurrency: queries in flight (1-4096; a list sweeps it, e.g. 1,2,4)", &ScenarioSettings::concurrency, 1,
         kMaxConcurrency},
        {"streams", FieldType::count, "backend instances serving queries, each on its own thread (1-64; a list sweeps it)",
         &ScenarioSettings::streams, 1, kMaxStreams},
        {"find_peak", FieldType::flag, "server: search the highest target_qps whose p99 meets latency_bound",
         &ScenarioSettings::find_peak},
        {"batcher", FieldType::flag, "server, concurrency: batch queued queries, up to the batch size, per inference",
         &ScenarioSettings::batcher},
        {"max_queue_delay", FieldType::duration, "batcher: the longest a query waits for its batch to fill (a list sweeps it)",
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
        case FieldType::fraction: return "fraction";
        case FieldType::real: return "number";
        case FieldType::percent: return "percent";
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
    if (field.type == FieldType::choice && !is_choice(field.choices, text))
        return fmt::format("{}: unknown value '{}'; valid choices: {}", field.key, text, field.choices);
    if (const auto* text_member = std::get_if<std::string RunSettings::*>(&field.member)) {
        if (text.size() > kMaxTextBytes)
            return fmt::format("{}: the value is {} bytes long, above the {} bytes a name or path may have; give a "
                               "shorter one", field.key, text.size(), kMaxTextBytes);
        settings.*(*text_member) = std::string(text);
        return std::nullopt;
    }
    if (const auto* fraction_member = std::get_if<double RunSettings::*>(&field.member)) {
        const auto value = parse_fraction(text);
        if (!value) return fmt::format("{}: '{}' is not a fraction above 0 and at most 1; write e.g. 0.75 or 75%", field.key, text);
        settings.*(*fraction_member) = *value;
        return std::nullopt;
    }
    if (!field.word.empty() && text == field.word) {
        number_of(settings, field) = field.word_value;
        return std::nullopt;
    }
    if (const auto* stop_member = std::get_if<StopCriterion LoopSettings::*>(&field.member)) {
        settings.loop.*(*stop_member) = *parse_stop_criterion(text);
        return std::nullopt;
    }
    if (const auto* scenario_member = std::get_if<Scenario ScenarioSettings::*>(&field.member)) {
        settings.scenario.*(*scenario_member) = *parse_scenario(text);
        return std::nullopt;
    }
    if (const auto* shard_member = std::get_if<std::optional<Shard> RunSettings::*>(&field.member)) {
        if (text.empty()) {
            settings.*(*shard_member) = std::nullopt;
            return std::nullopt;
        }
        auto parsed = parse_shard(text);
        if (!parsed.shard) return parsed.problem;
        settings.*(*shard_member) = parsed.shard;
        return std::nullopt;
    }
    if (field.type == FieldType::real || field.type == FieldType::percent) return set_real(settings, field, text);
    std::optional<std::int64_t> value;
    std::string why;
    if (field.type == FieldType::duration) {
        value = parse_duration_ns(text, &why);
        if (!value && !field.word.empty()) return fmt::format("{}: {}, or {}", field.key, why, field.word);
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
    if (const auto* scenario = std::get_if<Scenario ScenarioSettings::*>(&field.member))
        return std::string(to_string(settings.scenario.*(*scenario)));
    if (const auto* text_member = std::get_if<std::string RunSettings::*>(&field.member))
        return settings.*(*text_member);
    if (const auto* fraction_member = std::get_if<double RunSettings::*>(&field.member))
        return fmt::format("{:g}", settings.*(*fraction_member));
    if (const auto* stop_member = std::get_if<StopCriterion LoopSettings::*>(&field.member))
        return std::string(to_string(settings.loop.*(*stop_member)));
    if (const auto* shard_member = std::get_if<std::optional<Shard> RunSettings::*>(&field.member)) {
        const auto& shard = settings.*(*shard_member);
        return shard ? to_string(*shard) : "";
    }
    // The shortest text that reads back as the same double, so a stored plan resumes with the same value.
    if (field.type == FieldType::real || field.type == FieldType::percent)
        return fmt::format("{}{}", real_of(settings, field), field.type == FieldType::percent ? "%" : "");
    const std::int64_t value = number_of(settings, field);
    if (!field.word.empty() && value == field.word_value) return std::string(field.word);
    return field.type == FieldType::duration ? format_duration(value) : std::to_string(value);
}

bool is_sweepable(std::string_view key) {
    return std::find(std::begin(kSweepableSettings), std::end(kSweepableSettings), key) != std::end(kSweepableSettings);
}

namespace {

// The struct a setting's member belongs to, in `settings`.
template <typename T>
auto& owner_of(RunSettings& settings, T RunSettings::*) { return settings; }
template <typename T>
auto& owner_of(RunSettings& settings, T LoopSettings::*) { return settings.loop; }
template <typename T>
auto& owner_of(RunSettings& settings, T ScenarioSettings::*) { return settings.scenario; }
template <typename T>
const auto& owner_of(const RunSettings& settings, T RunSettings::*) { return settings; }
template <typename T>
const auto& owner_of(const RunSettings& settings, T LoopSettings::*) { return settings.loop; }
template <typename T>
const auto& owner_of(const RunSettings& settings, T ScenarioSettings::*) { return settings.scenario; }

}  // namespace

void copy_setting(RunSettings& to, const RunSettings& from, const SettingField& field) {
    std::visit([&](auto member) { owner_of(to, member).*member = owner_of(from, member).*member; }, field.member);
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
