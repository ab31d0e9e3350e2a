#include "analysis/run_context.hpp"

#include <fmt/format.h>

#include "core/pipeline.hpp"
#include "core/plan/spec_json.hpp"
#include "core/units.hpp"

namespace inferbench::analysis {
namespace {

std::string json_string(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_string()) return "";
    return object[key].get<std::string>();
}

// The GPUs the run's environment lists (gpus.devices[], or gpus[] as runs stored it before), or null.
const nlohmann::json* gpu_devices(const nlohmann::json& environment) {
    if (!environment.is_object() || !environment.contains("gpus")) return nullptr;
    const auto& gpus = environment["gpus"];
    const nlohmann::json& devices = gpus.is_object() && gpus.contains("devices") ? gpus["devices"] : gpus;
    return devices.is_array() ? &devices : nullptr;
}

// The GPU's name as the run's environment lists it: gpus.devices[] with the device's index.
std::string gpu_name(const nlohmann::json& environment, std::int64_t index) {
    const nlohmann::json* devices = gpu_devices(environment);
    if (!devices) return "";
    for (const auto& device : *devices)
        if (device.is_object() && device.value("index", std::int64_t{-1}) == index) return json_string(device, "name");
    return "";
}

std::optional<std::int64_t> integer(const nlohmann::json& object, const char* key) {
    if (!object.is_object() || !object.contains(key) || !object[key].is_number_integer()) return std::nullopt;
    return object[key].get<std::int64_t>();
}

std::string stop_text(const LoopSettings& loop) {
    switch (loop.stop) {
        case StopCriterion::fixed: return "fixed";
        case StopCriterion::stdrel:
            return fmt::format("stdrel (max_noise {}%, min_time {}, stop_timeout {})", loop.max_noise_pct,
                               format_duration(loop.min_time_ns), format_duration(loop.stop_timeout_ns));
        case StopCriterion::entropy:
            return fmt::format("entropy (max_angle {}, min_r2 {}, stop_timeout {})", loop.max_angle_deg, loop.min_r2,
                               format_duration(loop.stop_timeout_ns));
    }
    return "";
}

// The cell's stopping criterion with its settings; a cell stored before criteria existed ran fixed.
void read_stop(const nlohmann::json& json, CellSettings& settings) {
    if (!json.contains("duration_ns")) return;  // not a cell inferbench ran (an imported log)
    settings.stop = "fixed";
    if (!json.contains("stop")) return;
    BenchmarkSpec spec;
    try {
        spec = spec_from_json(json);
    } catch (const std::exception&) {
        settings.stop = json_string(json, "stop");
        return;
    }
    settings.criterion = spec.loop.stop;
    settings.stop = stop_text(spec.loop);
}

}  // namespace

std::string device_name(const nlohmann::json& environment, const store::BenchmarkRecord& b) {
    if (const auto device = parse_device(b.device); device && device->kind == DeviceKind::cuda) {
        // An imported log names its GPU(s); a run's environment lists the GPUs of its host.
        if (const auto imported = cell_settings(b).gpu_names; !imported.empty()) return imported.front();
        if (auto name = gpu_name(environment, device->index); !name.empty()) return name;
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
    context.gpus = gpu_facts(environment);
    return context;
}

std::map<int, GpuFacts> gpu_facts(const nlohmann::json& environment) {
    std::map<int, GpuFacts> facts;
    if (const nlohmann::json* devices = gpu_devices(environment)) {
        for (const auto& device : *devices) {
            if (!device.is_object() || !device.contains("index") || !device["index"].is_number_integer()) continue;
            if (auto driver = json_string(device, "driver_version"); !driver.empty())
                facts[device["index"].get<int>()].driver_version = std::move(driver);
            const auto clock = device.find("default_applications_clock_mhz");
            if (clock != device.end() && clock->is_number() && clock->get<double>() > 0)
                facts[device["index"].get<int>()].default_clock_mhz = clock->get<double>();
        }
    }
    if (const auto baseline = idle_baseline_of(environment))
        for (const auto& gpu : baseline->gpus) facts[gpu.index].idle = gpu;
    return facts;
}

CellSettings cell_settings(const store::BenchmarkRecord& benchmark) {
    const auto json = nlohmann::json::parse(benchmark.settings_json, nullptr, false);
    CellSettings settings;
    settings.warmup_ns = integer(json, "warmup_ns");
    settings.warmup_iterations = integer(json, "warmup_iterations");
    settings.duration_ns = integer(json, "duration_ns");
    settings.min_iterations = integer(json, "min_iterations");
    settings.max_iterations = integer(json, "max_iterations");
    if (!json.is_object()) return settings;
    read_stop(json, settings);
    if (const auto options = json.find("backend_options"); options != json.end() && options->is_object() &&
                                                            !options->empty()) {
        settings.backend_options = options->dump();
        for (const auto& [key, value] : options->items())
            settings.backend_option_values.emplace(key, value.is_string() ? value.get<std::string>() : value.dump());
    }
    if (auto name = json_string(json, "gpu_name"); !name.empty()) settings.gpu_names.push_back(std::move(name));
    settings.inputs = json_string(json, "inputs");
    if (const auto seed = json.find("seed"); seed != json.end() && seed->is_number_unsigned())
        settings.seed = seed->get<std::uint64_t>();
    // An image pipeline cell feeds images, not the seeded random tensors its seed would otherwise say.
    if (const auto pipeline = json.find("pipeline"); pipeline != json.end() && pipeline->is_object()) {
        const std::string images = json_string(*pipeline, "images");
        settings.inputs = images == kSyntheticImages ? "synthetic images" : images;
    }
    const auto strings = [&json](const char* key, std::vector<std::string>& out) {
        if (const auto it = json.find(key); it != json.end() && it->is_array())
            for (const auto& item : *it)
                if (item.is_string() && !item.get<std::string>().empty()) out.push_back(item.get<std::string>());
    };
    strings("gpu_names", settings.gpu_names);
    strings("trtexec_warnings", settings.imported_warnings);
    strings("trtexec_notes", settings.imported_warnings);  // what the import itself says of the figures
    try {
        settings.conditions = conditions_from_json(json);
    } catch (const std::exception&) {
        settings.conditions.reset();  // not as this inferbench writes them: read as not stored
    }
    return settings;
}

}  // namespace inferbench::analysis
