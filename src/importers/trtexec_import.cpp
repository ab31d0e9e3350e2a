#include "importers/trtexec_import.hpp"

#include <cmath>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/trtexec/trtexec_log.hpp"
#include "backends/trtexec/trtexec_version.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"

namespace inferbench::importers {
namespace {

// A version this build does not know: its lines may mean something else, so nothing is read.
void check_version(const std::string& file, const trtexec::TrtexecLog& log) {
    const auto version = parse_tensorrt_version(log.tensorrt_version);
    if (!version || !newer_than_known(*version)) return;
    throw UserError(fmt::format("{}: the log's header says TensorRT {}, newer than the newest major version this "
                                "inferbench knows ({}.x): its command line and lines may mean something else, so "
                                "nothing is read; use an inferbench that knows TensorRT {}",
                                file, to_string(*version), kNewestKnownTensorRt.major, version->major));
}

// What a run that trtexec refused to start says: the removed flag explained, not "not a trtexec log".
void check_refused_options(const std::string& file, const trtexec::TrtexecLog& log) {
    if (log.unknown_options.empty() || log.has_performance_summary()) return;
    const std::string version = log.tensorrt_version.empty() ? "" : " " + log.tensorrt_version;
    for (const auto& option : log.unknown_options) {
        if (trtexec::removed_flag(option)) {
            throw UserError(fmt::format("{}: trtexec{} refused {}: {}; this run built no engine and measured nothing. "
                                        "Convert the ONNX file to the precision first (inferbench run with the "
                                        "trtexec backend does) and import that run's log",
                                        file, version, option, trtexec::removed_flag_reason(option)));
        }
    }
    throw UserError(fmt::format("{}: trtexec{} refused the option {} ('Unknown option') and measured nothing; import "
                                "the log of a run it accepted",
                                file, version, log.unknown_options.front()));
}

// A strongly typed trtexec (11) never runs with a removed flag; a summary beside one is another run's.
void check_removed_flags(const std::string& file, const trtexec::TrtexecLog& log) {
    const auto version = parse_tensorrt_version(log.tensorrt_version);
    if (!log.command || log.command->removed_flags.empty() || !version ||
        precision_route(*version) != PrecisionRoute::typed_onnx)
        return;
    const std::string& flag = log.command->removed_flags.front();
    throw UserError(fmt::format("{}: the command line holds {}, which trtexec {} refuses ({}), yet the log has a "
                                "performance summary: is it two logs joined? Import each trtexec run's own log",
                                file, flag, log.tensorrt_version, trtexec::removed_flag_reason(flag)));
}

// One benchmark per log: several summaries are several runs (TensorRT 11's tuning loop prints one per route).
void check_one_summary(const std::string& file, const trtexec::TrtexecLog& log) {
    if (log.performance_summaries <= 1) return;
    if (log.tuning && !log.tuning->best_route.empty()) {
        throw UserError(fmt::format(
            "{}: a --tuneBuildRoutes loop with {} performance summaries, one per build route; import one run's log: "
            "the best route was '{}' (trtexec --setBuildRoute='{}' builds it)",
            file, log.performance_summaries, log.tuning->best_route, log.tuning->best_route));
    }
    throw UserError(fmt::format("{}: {} performance summaries, one per trtexec run; import each run's own log", file,
                                log.performance_summaries));
}

void check_log(const std::string& file, const trtexec::TrtexecLog& log) {
    check_version(file, log);
    check_refused_options(file, log);
    check_removed_flags(file, log);
    check_one_summary(file, log);
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
                               {"trtexec_warnings", log.warnings},
                               {"strongly_typed", log.strongly_typed()}};
    if (log.passed) settings["trtexec_passed"] = *log.passed;
    if (log.data_transfers) settings["data_transfers"] = *log.data_transfers;
    if (log.cuda_graph) settings["cuda_graph"] = *log.cuda_graph;
    if (!log.build_precision.empty()) settings["build_precision"] = log.build_precision;
    std::vector<std::string> notes;
    if (log.strongly_typed())
        notes.emplace_back("built strongly typed: the precision is the ONNX file's own types, which the log does not "
                           "state");
    if (log.data_transfers == false)
        notes.emplace_back("data transfers were off ('Data transfers: Disabled', trtexec 11's default): Latency is "
                           "the GPU compute time alone, and no H2D or D2H time was measured");
    if (!notes.empty()) settings["trtexec_notes"] = notes;
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
    record.precision = trtexec::precision_label(log);
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
