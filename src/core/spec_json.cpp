#include "core/spec_json.hpp"

#include <stdexcept>

namespace inferbench {

nlohmann::json spec_to_json(const BenchmarkSpec& spec) {
    nlohmann::json json;
    json["model"] = spec.model;
    json["backend"] = spec.backend;
    json["device"] = to_string(spec.device);
    json["precision"] = to_string(spec.precision);
    json["batch_size"] = spec.batch_size;
    json["variant"] = spec.variant;
    json["warmup_ns"] = spec.warmup_ns;
    json["warmup_iterations"] = spec.warmup_iterations;
    json["duration_ns"] = spec.duration_ns;
    json["min_iterations"] = spec.min_iterations;
    json["max_iterations"] = spec.max_iterations;
    json["timeout_ns"] = spec.timeout_ns;
    json["seed"] = spec.seed;
    json["model_cache_dir"] = spec.model_cache_dir;
    json["backend_options"] = spec.backend_options;
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
    spec.warmup_ns = json.at("warmup_ns").get<std::int64_t>();
    spec.warmup_iterations = json.at("warmup_iterations").get<std::int64_t>();
    spec.duration_ns = json.at("duration_ns").get<std::int64_t>();
    spec.min_iterations = json.at("min_iterations").get<std::int64_t>();
    spec.max_iterations = json.at("max_iterations").get<std::int64_t>();
    spec.timeout_ns = json.at("timeout_ns").get<std::int64_t>();
    spec.seed = json.at("seed").get<std::uint64_t>();
    spec.model_cache_dir = json.at("model_cache_dir").get<std::string>();
    for (const auto& [key, value] : json.at("backend_options").items()) spec.backend_options[key] = value.get<std::string>();
    return spec;
}

}  // namespace inferbench
