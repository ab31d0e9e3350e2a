#include "analysis/run_context.hpp"

#include "core/units.hpp"

namespace inferbench::analysis {
namespace {

// "cuda" -> 0, "cuda:3" -> 3; nothing for other devices.
std::optional<std::int64_t> cuda_index(const std::string& device) {
    if (device == "cuda") return 0;
    if (!device.starts_with("cuda:")) return std::nullopt;
    return parse_int(std::string_view(device).substr(5));
}

std::string json_string(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
    return object[key].get<std::string>();
}

// The GPU's name as the run's environment lists it: gpus.devices[] with the device's index.
std::string gpu_name(const nlohmann::json& environment, std::int64_t index) {
    if (!environment.is_object() || !environment.contains("gpus")) return "";
    const auto& gpus = environment["gpus"];
    const nlohmann::json& devices = gpus.is_object() && gpus.contains("devices") ? gpus["devices"] : gpus;
    if (!devices.is_array()) return "";
    for (const auto& device : devices)
        if (device.is_object() && device.value("index", std::int64_t{-1}) == index) return json_string(device, "name");
    return "";
}

std::optional<std::int64_t> integer(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer()) return std::nullopt;
    return object[key].get<std::int64_t>();
}

}  // namespace

std::string device_name(const nlohmann::json& environment, const store::BenchmarkRecord& b) {
    if (const auto index = cuda_index(b.device)) {
        // An imported log names its GPU(s); a run's environment lists the GPUs of its host.
        const auto settings = nlohmann::json::parse(b.settings_json, nullptr, false);
        if (auto name = json_string(settings, "gpu_name"); !name.empty()) return name;
        if (settings.is_object() && settings.contains("gpu_names") && settings["gpu_names"].is_array())
            for (const auto& name : settings["gpu_names"])
                if (name.is_string() && !name.get<std::string>().empty()) return name.get<std::string>();
        if (auto name = gpu_name(environment, *index); !name.empty()) return name;
    }
    if (b.device == "cpu") {
        if (auto cpu = json_string(environment, "cpu_model"); !cpu.empty()) return cpu;
    }
    return b.device;
}

RunContext run_context(const store::RunRecord& run, const store::BenchmarkRecord& benchmark) {
    const auto environment = nlohmann::json::parse(run.environment_json, nullptr, false);
    RunContext context;
    context.started_unix_ms = run.started_unix_ms;
    context.host = run.host.empty() ? json_string(environment, "host") : run.host;
    context.device_name = device_name(environment, benchmark);
    return context;
}

CellSettings cell_settings(const store::BenchmarkRecord& benchmark) {
    const auto json = nlohmann::json::parse(benchmark.settings_json, nullptr, false);
    CellSettings settings;
    settings.warmup_ns = integer(json, "warmup_ns");
    settings.warmup_iterations = integer(json, "warmup_iterations");
    settings.duration_ns = integer(json, "duration_ns");
    settings.min_iterations = integer(json, "min_iterations");
    settings.max_iterations = integer(json, "max_iterations");
    if (json.is_object() && json.contains("backend_options") && !json["backend_options"].empty())
        settings.backend_options = json["backend_options"].dump();
    return settings;
}

}  // namespace inferbench::analysis
