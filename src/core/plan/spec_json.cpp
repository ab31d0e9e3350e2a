#include "core/plan/spec_json.hpp"

#include <stdexcept>
#include <utility>

#include "core/plan/pipeline_plan.hpp"

namespace inferbench {
namespace {

// The loop settings sit beside the cell's other keys (the stored settings_json has always had them there).
constexpr std::pair<const char*, std::int64_t LoopSettings::*> kLoopKeys[] = {
    {"warmup_ns", &LoopSettings::warmup_ns},
    {"warmup_iterations", &LoopSettings::warmup_iterations},
    {"duration_ns", &LoopSettings::duration_ns},
    {"min_iterations", &LoopSettings::min_iterations},
    {"max_iterations", &LoopSettings::max_iterations},
};

// The stopping criterion's settings; a cell stored before they existed ran with stop fixed, the default.
constexpr std::pair<const char*, std::int64_t LoopSettings::*> kStopDurationKeys[] = {
    {"min_time_ns", &LoopSettings::min_time_ns},
    {"stop_timeout_ns", &LoopSettings::stop_timeout_ns},
};
constexpr std::pair<const char*, double LoopSettings::*> kStopRealKeys[] = {
    {"max_noise_pct", &LoopSettings::max_noise_pct},
    {"max_angle_deg", &LoopSettings::max_angle_deg},
    {"min_r2", &LoopSettings::min_r2},
};

void write_loop(const LoopSettings& loop, nlohmann::json& json) {
    for (const auto& [key, member] : kLoopKeys) json[key] = loop.*member;
    json["stop"] = to_string(loop.stop);
    for (const auto& [key, member] : kStopDurationKeys) json[key] = loop.*member;
    for (const auto& [key, member] : kStopRealKeys) json[key] = loop.*member;
}

LoopSettings read_loop(const nlohmann::json& json) {
    LoopSettings loop;
    for (const auto& [key, member] : kLoopKeys) loop.*member = json.at(key).get<std::int64_t>();
    if (!json.contains("stop")) return loop;
    const auto stop = parse_stop_criterion(json.at("stop").get<std::string>());
    if (!stop) throw std::runtime_error("malformed benchmark spec: stop");
    loop.stop = *stop;
    for (const auto& [key, member] : kStopDurationKeys) loop.*member = json.at(key).get<std::int64_t>();
    for (const auto& [key, member] : kStopRealKeys) loop.*member = json.at(key).get<double>();
    return loop;
}

void write_conditions(const MeasureConditions& c, nlohmann::json& json) {
    json["throttle_threshold"] = c.throttle_threshold;
    json["throttle_policy"] = to_string(c.throttle_policy);
    json["l2_flush"] = c.l2_flush;
    json["sync"] = to_string(c.sync);
}

// The scenario sits under its own key; a cell stored before scenarios existed ran single_stream.
nlohmann::json scenario_to_json(const ScenarioSettings& scenario) {
    return {{"scenario", to_string(scenario.scenario)},
            {"target_qps", scenario.target_qps},
            {"latency_bound_ns", scenario.latency_bound_ns},
            {"samples_per_query", scenario.samples_per_query},
            {"concurrency", scenario.concurrency},
            {"streams", scenario.streams},
            {"find_peak", scenario.find_peak},
            {"batcher", scenario.batcher},
            {"batcher_max_queue_delay_ns", scenario.batcher_max_queue_delay_ns}};
}

}  // namespace

std::optional<MeasureConditions> conditions_from_json(const nlohmann::json& json) {
    if (!json.is_object() || !json.contains("throttle_policy")) return std::nullopt;
    MeasureConditions c;
    c.throttle_threshold = json.at("throttle_threshold").get<double>();
    const auto policy = parse_throttle_policy(json.at("throttle_policy").get<std::string>());
    const auto sync = parse_sync_mode(json.at("sync").get<std::string>());
    if (!policy || !sync) throw std::runtime_error("malformed benchmark spec: throttle_policy or sync");
    c.throttle_policy = *policy;
    c.l2_flush = json.at("l2_flush").get<bool>();
    c.sync = *sync;
    return c;
}

ScenarioSettings scenario_from_json(const nlohmann::json& json) {
    ScenarioSettings scenario;
    if (!json.is_object()) return scenario;
    const auto it = json.find("scenario");
    if (it == json.end() || !it->is_object()) return scenario;
    const nlohmann::json& s = *it;
    const auto name = parse_scenario(s.value("scenario", std::string(to_string(scenario.scenario))));
    if (!name) throw std::runtime_error("malformed benchmark spec: scenario");
    scenario.scenario = *name;
    scenario.target_qps = s.value("target_qps", scenario.target_qps);
    scenario.latency_bound_ns = s.value("latency_bound_ns", scenario.latency_bound_ns);
    scenario.samples_per_query = s.value("samples_per_query", scenario.samples_per_query);
    scenario.concurrency = s.value("concurrency", scenario.concurrency);
    scenario.streams = s.value("streams", scenario.streams);
    scenario.find_peak = s.value("find_peak", scenario.find_peak);
    scenario.batcher = s.value("batcher", scenario.batcher);
    scenario.batcher_max_queue_delay_ns = s.value("batcher_max_queue_delay_ns", scenario.batcher_max_queue_delay_ns);
    return scenario;
}

nlohmann::json spec_to_json(const BenchmarkSpec& spec) {
    nlohmann::json json;
    json["model"] = spec.model;
    json["backend"] = spec.backend;
    json["device"] = to_string(spec.device);
    json["precision"] = to_string(spec.precision);
    json["batch_size"] = spec.batch_size;
    json["variant"] = spec.variant;
    write_loop(spec.loop, json);
    json["scenario"] = scenario_to_json(spec.scenario);
    json["timeout_ns"] = spec.timeout_ns;
    json["seed"] = spec.seed;
    json["model_cache_dir"] = spec.model_cache_dir;
    json["backend_options"] = spec.backend_options;
    write_conditions(spec.conditions, json);
    if (!spec.inputs.empty()) json["inputs"] = spec.inputs;
    if (spec.generation.active()) {
        json["input_tokens"] = spec.generation.input_tokens;
        json["output_tokens"] = spec.generation.output_tokens;
        json["sampling"] = to_string(spec.generation.sampling);
    }
    if (spec.pipeline.active()) json["pipeline"] = pipeline_texts(spec.pipeline);
    return json;
}

BenchmarkSpec spec_from_json(const nlohmann::json& json) {
    BenchmarkSpec spec;
    spec.model = json.at("model").get<std::string>();
    spec.backend = json.at("backend").get<std::string>();
    const auto device = parse_device(json.at("device").get<std::string>());
    const auto precision = parse_precision(json.at("precision").get<std::string>());
    if (!device || !precision) throw std::runtime_error("malformed benchmark spec: device or precision");
    spec.device = *device;
    spec.precision = *precision;
    spec.batch_size = json.at("batch_size").get<std::int64_t>();
    spec.variant = json.value("variant", "");
    spec.loop = read_loop(json);
    spec.scenario = scenario_from_json(json);
    spec.timeout_ns = json.at("timeout_ns").get<std::int64_t>();
    spec.seed = json.at("seed").get<std::uint64_t>();
    spec.model_cache_dir = json.at("model_cache_dir").get<std::string>();
    for (const auto& [key, value] : json.at("backend_options").items()) spec.backend_options[key] = value.get<std::string>();
    spec.conditions = conditions_from_json(json).value_or(MeasureConditions{});
    spec.inputs = json.value("inputs", "");
    spec.generation.input_tokens = json.value("input_tokens", std::int64_t{0});
    spec.generation.output_tokens = json.value("output_tokens", std::int64_t{0});
    const auto sampling = parse_sampling(json.value("sampling", std::string("greedy")));
    if (!sampling) throw std::runtime_error("malformed benchmark spec: sampling");
    spec.generation.sampling = *sampling;
    if (const auto it = json.find("pipeline"); it != json.end())
        spec.pipeline = pipeline_from_texts(it->get<std::map<std::string, std::string>>());
    return spec;
}

}  // namespace inferbench
