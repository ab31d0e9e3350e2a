#include "core/idle_baseline.hpp"

namespace inferbench {
namespace {

std::optional<double> number(const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

template <typename Json>
void put(Json& object, const char* key, const std::optional<double>& value) {
    if (value) object[key] = *value;
}

}  // namespace

const GpuMeans* IdleBaseline::gpu(int index) const {
    for (const auto& g : gpus)
        if (g.index == index) return &g;
    return nullptr;
}

nlohmann::ordered_json to_json(const IdleBaseline& baseline) {
    nlohmann::ordered_json json;
    json["measured_ns"] = baseline.measured_ns;
    if (!baseline.unavailable.empty()) json["unavailable"] = baseline.unavailable;
    json["gpus"] = nlohmann::ordered_json::array();
    for (const auto& g : baseline.gpus) {
        nlohmann::ordered_json entry;
        entry["index"] = g.index;
        put(entry, "power_w", g.power_w);
        put(entry, "temperature_c", g.temperature_c);
        put(entry, "gpu_util_pct", g.gpu_util_pct);
        entry["samples"] = g.samples;
        json["gpus"].push_back(std::move(entry));
    }
    return json;
}

std::optional<IdleBaseline> idle_baseline_of(const nlohmann::json& environment) {
    if (!environment.is_object()) return std::nullopt;
    const auto it = environment.find("idle_baseline");
    if (it == environment.end() || !it->is_object()) return std::nullopt;
    IdleBaseline baseline;
    if (const auto ns = it->find("measured_ns"); ns != it->end() && ns->is_number_integer())
        baseline.measured_ns = ns->get<std::int64_t>();
    if (const auto why = it->find("unavailable"); why != it->end() && why->is_string())
        baseline.unavailable = why->get<std::string>();
    if (const auto gpus = it->find("gpus"); gpus != it->end() && gpus->is_array()) {
        for (const auto& entry : *gpus) {
            if (!entry.is_object() || !entry.contains("index") || !entry["index"].is_number_integer()) continue;
            GpuMeans g;
            g.index = entry["index"].get<int>();
            g.power_w = number(entry, "power_w");
            g.temperature_c = number(entry, "temperature_c");
            g.gpu_util_pct = number(entry, "gpu_util_pct");
            if (const auto n = entry.find("samples"); n != entry.end() && n->is_number_integer())
                g.samples = n->get<std::int64_t>();
            baseline.gpus.push_back(g);
        }
    }
    return baseline;
}

}  // namespace inferbench
