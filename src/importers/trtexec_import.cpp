#include "importers/trtexec_import.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/trtexec/trtexec_log.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"

namespace inferbench::importers {
namespace {

void check_log(const std::string& file, const trtexec::TrtexecLog& log) {
    if (!log.has_performance_summary()) {
        throw UserError(fmt::format("{}: no trtexec performance summary in it (no 'Throughput: N qps' or "
                                    "'Latency: min = ...' line); is this a trtexec log?",
                                    file));
    }
    if (!log.rejected_lines.empty()) {
        const auto more = log.rejected_lines.size() - 1;
        throw UserError(fmt::format("{} {}{}; these are not measurements: import the log as trtexec wrote it", file,
                                    log.rejected_lines.front(),
                                    more == 0 ? "" : fmt::format(" (and {} more line{})", more, more == 1 ? "" : "s")));
    }
    if (const auto missing = log.missing_from_summary(); !missing.empty() && log.passed != false) {
        throw UserError(fmt::format("{}: the performance summary is incomplete ({}); was the log cut short? "
                                    "Import trtexec's whole output",
                                    file, join(missing, ", ")));
    }
}

// The model as the command line named it, else the log file's own name.
std::string model_of(const std::string& file, const trtexec::TrtexecLog& log, const ImportOverrides& overrides) {
    if (!overrides.model.empty()) return overrides.model;
    if (const auto& command = log.command) {
        if (!command->onnx.empty()) return command->onnx;
        if (!command->load_engine.empty()) return command->load_engine;
    }
    return std::filesystem::path(file).stem().string();
}

// Facts of the log that have no column: where it came from, the command, trtexec's warnings (the
// summary shows them), the GPU.
std::string settings_of(const std::string& file, const trtexec::TrtexecLog& log) {
    nlohmann::json settings = {{"imported_from", std::filesystem::absolute(file).string()},
                               {"trtexec_command", log.command ? log.command->text : ""},
                               {"tensorrt_version", log.tensorrt_version},
                               {"gpu_name", log.gpu_name},
                               {"trtexec_warnings", log.warnings}};
    if (log.passed) settings["trtexec_passed"] = *log.passed;
    return settings.dump();
}

store::BenchmarkRecord record_of(const std::string& file, const trtexec::TrtexecLog& log,
                                 const ImportOverrides& overrides) {
    store::BenchmarkRecord record;
    record.model = model_of(file, log, overrides);
    record.backend = "trtexec";
    record.backend_version = log.tensorrt_version;
    const int device = log.command ? log.command->device.value_or(0) : 0;
    record.device = overrides.device.empty() ? fmt::format("cuda:{}", device) : overrides.device;
    record.precision = log.command ? trtexec::precision_label(*log.command) : "fp32";
    record.batch_size = log.command ? log.command->batch.value_or(1) : 1;
    record.status = log.passed == false ? BenchmarkStatus::failed : BenchmarkStatus::ok;
    if (log.passed == false) record.reason = "trtexec reported FAILED";
    record.started_unix_ms = record.ended_unix_ms = unix_ms_now();
    if (log.command) record.model_path = log.command->onnx.empty() ? log.command->load_engine : log.command->onnx;
    if (log.total_host_walltime_s)
        record.measured_wall_ns = static_cast<std::int64_t>(std::llround(s_to_ns(*log.total_host_walltime_s)));
    record.settings_json = settings_of(file, log);
    return record;
}

}  // namespace

ImportedBenchmark trtexec_benchmark(const std::string& file, std::string_view text, const ImportOverrides& overrides) {
    const auto log = trtexec::parse_trtexec_log(text);
    check_log(file, log);
    ImportedBenchmark benchmark;
    benchmark.record = record_of(file, log, overrides);
    for (auto& metric : trtexec::log_metrics(log)) benchmark.metrics.push_back({metric.name, metric.value, metric.unit});
    for (const auto& [name, values] : log.trace_averages_ms) benchmark.series.push_back({name, values});
    return benchmark;
}

std::vector<ImportedBenchmark> read_trtexec_logs(const std::vector<std::string>& files,
                                                 const ImportOverrides& overrides) {
    std::vector<ImportedBenchmark> benchmarks;
    for (const auto& file : files) benchmarks.push_back(trtexec_benchmark(file, read_regular_file(file), overrides));
    return benchmarks;
}

}  // namespace inferbench::importers
