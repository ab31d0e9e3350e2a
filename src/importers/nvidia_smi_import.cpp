#include "importers/nvidia_smi_import.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/file_io.hpp"
#include "core/units.hpp"

namespace inferbench::importers {
namespace {

std::string device_of(const telemetry::NvidiaSmiLog& log, const ImportOverrides& overrides) {
    if (!overrides.device.empty()) return overrides.device;
    const auto gpus = gpu_indices(log);
    return gpus.size() == 1 ? fmt::format("cuda:{}", *gpus.begin()) : "gpu";
}

store::BenchmarkRecord record_of(const std::string& file, const telemetry::NvidiaSmiLog& log,
                                 const ImportOverrides& overrides) {
    store::BenchmarkRecord record;
    record.model = overrides.model.empty() ? std::filesystem::path(file).stem().string() : overrides.model;
    record.backend = "nvidia-smi-log";
    record.backend_version = log.driver_version;
    record.device = device_of(log, overrides);
    record.status = BenchmarkStatus::ok;
    const std::int64_t span = span_ns(log);
    record.started_unix_ms = log.first_unix_ms.value_or(unix_ms_now());
    record.ended_unix_ms = record.started_unix_ms + span / 1'000'000;
    if (span > 0) record.measured_wall_ns = span;
    record.settings_json = nlohmann::json{{"imported_from", std::filesystem::absolute(file).string()},
                                          {"nvidia_smi_format", log.format},
                                          {"gpu_names", log.gpu_names},
                                          {"driver_version", log.driver_version},
                                          {"cuda_version", log.cuda_version},
                                          {"nvidia_smi_warnings", log.warnings}}
                               .dump();
    return record;
}

}  // namespace

std::set<int> gpu_indices(const telemetry::NvidiaSmiLog& log) {
    std::set<int> indices;
    for (const auto& sample : log.samples) indices.insert(sample.gpu_index);
    return indices;
}

std::int64_t span_ns(const telemetry::NvidiaSmiLog& log) {
    const auto [first, last] = std::minmax_element(log.samples.begin(), log.samples.end(),
                                                   [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
    return first == log.samples.end() ? 0 : last->t_ns - first->t_ns;
}

std::vector<std::string> distinct_gpu_names(const telemetry::NvidiaSmiLog& log) {
    std::vector<std::string> names;
    for (const auto& name : log.gpu_names)
        if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    return names;
}

std::optional<SmiPower> power_of(const telemetry::NvidiaSmiLog& log) {
    std::vector<double> instant, average;
    for (const auto& s : log.samples) {
        if (s.power_w) instant.push_back(*s.power_w);
        if (s.power_avg_w) average.push_back(*s.power_avg_w);
    }
    const auto& values = instant.empty() ? average : instant;
    if (values.empty()) return std::nullopt;
    double sum = 0;
    for (const double v : values) sum += v;
    return SmiPower{instant.empty(), sum / static_cast<double>(values.size()),
                    *std::max_element(values.begin(), values.end())};
}

std::optional<std::uint64_t> clock_event_reasons_seen(const telemetry::NvidiaSmiLog& log) {
    std::optional<std::uint64_t> seen;
    for (const auto& s : log.samples)
        if (s.clock_event_reasons) seen = seen.value_or(0) | *s.clock_event_reasons;
    return seen;
}

std::string default_run_name(const std::vector<std::string>& files) {
    std::vector<std::string> names;
    for (const auto& file : files) names.push_back(std::filesystem::path(file).filename().string());
    return "import nvidia-smi " + join(names, " ");
}

ImportedSmiLog nvidia_smi_benchmark(const std::string& file, std::string_view text, const ImportOverrides& overrides,
                                    const std::vector<std::string>& headerless_csv_fields) {
    ImportedSmiLog imported;
    imported.file = file;
    imported.log = telemetry::parse_nvidia_smi_log(text, file, headerless_csv_fields);
    auto& benchmark = imported.benchmark;
    benchmark.record = record_of(file, imported.log, overrides);
    benchmark.gpu_samples = imported.log.samples;
    benchmark.telemetry_sources = {
        {"nvidia-smi", "ok", fmt::format("imported from {} ({})", file, imported.log.format)}};
    return imported;
}

std::vector<ImportedSmiLog> read_nvidia_smi_logs(const std::vector<std::string>& files,
                                                 const ImportOverrides& overrides,
                                                 const std::vector<std::string>& headerless_csv_fields) {
    std::vector<ImportedSmiLog> imported;
    for (const auto& file : files)
        imported.push_back(nvidia_smi_benchmark(file, read_regular_file(file), overrides, headerless_csv_fields));
    return imported;
}

}  // namespace inferbench::importers
