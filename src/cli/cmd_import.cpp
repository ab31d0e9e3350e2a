// `inferbench import trtexec LOG...`: results measured elsewhere, stored as benchmarks of one run so
// that `summary` and every report show them beside inferbench's own.
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/trtexec/trtexec_log.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/settings.hpp"
#include "core/version.hpp"
#include "store/results_store.hpp"

namespace inferbench::cli {
namespace {

struct ImportArgs {
    std::vector<std::string> logs;
    std::string db;
    std::string name = "import";
    std::string model;
    std::string device;
};

struct ParsedLog {
    std::string file;
    trtexec::TrtexecLog log;
};

std::int64_t unix_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// Every log is read and checked before anything is written: a bad file leaves the database alone.
ParsedLog read_log(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) throw UserError(fmt::format("{}: cannot read this file", file));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    ParsedLog parsed{file, trtexec::parse_trtexec_log(text)};
    if (!parsed.log.has_performance_summary()) {
        throw UserError(fmt::format("{}: no trtexec performance summary in it (no 'Throughput: N qps' or "
                                    "'Latency: min = ...' line); is this a trtexec log?",
                                    file));
    }
    return parsed;
}

// The model as the command line named it, else the log file's own name.
std::string model_of(const ParsedLog& parsed, const ImportArgs& args) {
    if (!args.model.empty()) return args.model;
    if (const auto& command = parsed.log.command) {
        if (!command->onnx.empty()) return command->onnx;
        if (!command->load_engine.empty()) return command->load_engine;
    }
    return std::filesystem::path(parsed.file).stem().string();
}

// Facts of the log that have no column: where it came from, the command, trtexec's warnings (the
// summary shows them), the GPU.
std::string settings_of(const ParsedLog& parsed) {
    const auto& log = parsed.log;
    nlohmann::json settings = {{"imported_from", std::filesystem::absolute(parsed.file).string()},
                               {"trtexec_command", log.command ? log.command->text : ""},
                               {"tensorrt_version", log.tensorrt_version},
                               {"gpu_name", log.gpu_name},
                               {"trtexec_warnings", log.warnings}};
    if (log.passed) settings["trtexec_passed"] = *log.passed;
    return settings.dump();
}

// Without a command line in the log, trtexec's defaults: fp32 (TF32 allowed), batch 1, device 0.
store::BenchmarkRecord record_of(const ParsedLog& parsed, const ImportArgs& args, std::int64_t run_id,
                                 std::int64_t ordinal) {
    const auto& log = parsed.log;
    store::BenchmarkRecord record;
    record.run_id = run_id;
    record.ordinal = ordinal;
    record.model = model_of(parsed, args);
    record.backend = "trtexec";
    record.backend_version = log.tensorrt_version;
    const int device = log.command ? log.command->device.value_or(0) : 0;
    record.device = args.device.empty() ? fmt::format("cuda:{}", device) : args.device;
    record.precision = log.command ? trtexec::precision_label(*log.command) : "fp32";
    record.batch_size = log.command ? log.command->batch.value_or(1) : 1;
    record.status = log.passed == false ? "failed" : "ok";
    if (log.passed == false) record.reason = "trtexec reported FAILED";
    record.started_unix_ms = record.ended_unix_ms = unix_ms();
    if (log.command) record.model_path = log.command->onnx.empty() ? log.command->load_engine : log.command->onnx;
    if (log.total_host_walltime_s)
        record.measured_wall_ns = static_cast<std::int64_t>(std::llround(*log.total_host_walltime_s * 1e9));
    record.settings_json = settings_of(parsed);
    return record;
}

std::vector<store::Metric> metrics_of(const trtexec::TrtexecLog& log) {
    std::vector<store::Metric> metrics;
    for (auto& metric : trtexec::log_metrics(log)) metrics.push_back({metric.name, metric.value, metric.unit});
    return metrics;
}

std::vector<store::Series> series_of(const trtexec::TrtexecLog& log) {
    std::vector<store::Series> series;
    for (const auto& [name, values] : log.trace_averages_ms) series.push_back({name, values});
    return series;
}

int execute(const ImportArgs& args) {
    std::vector<ParsedLog> parsed;
    for (const auto& file : args.logs) parsed.push_back(read_log(file));
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    auto results = store::ResultsStore::open(path);
    store::RunRecord run;
    run.name = args.name;
    run.started_unix_ms = unix_ms();
    run.plan_json = nlohmann::json{{"import", "trtexec"}, {"logs", args.logs}}.dump();
    run.environment_json = nlohmann::json{{"source", "trtexec logs, measured elsewhere"}}.dump();
    run.git_commit = std::string(kGitCommit);
    run.inferbench_version = std::string(kVersion);
    const std::int64_t run_id = results.begin_run(run);
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        const auto record = record_of(parsed[i], args, run_id, static_cast<std::int64_t>(i));
        const auto metrics = metrics_of(parsed[i].log);
        const auto series = series_of(parsed[i].log);
        results.add_benchmark(record, store::BenchmarkData{.metrics = metrics, .series = series});
    }
    results.end_run(run_id, unix_ms(), "completed");
    fmt::print("imported {} trtexec log{} into {} (run {}); see `inferbench summary --db {} --run {}`\n",
               parsed.size(), parsed.size() == 1 ? "" : "s", path, run_id, path, run_id);
    return kExitOk;
}

}  // namespace

void add_import_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<ImportArgs>();
    CLI::App* import = app.add_subcommand("import", "store results measured by another tool as a run");
    import->require_subcommand(1);
    CLI::App* trtexec = import->add_subcommand(
        "trtexec", "store trtexec logs (their performance summary, warnings and trace averages) as benchmarks");
    trtexec->add_option("logs", args->logs, "trtexec log files (its console output)")->required();
    trtexec->add_option("--db", args->db, "results database (default inferbench-results/results.db)");
    trtexec->add_option("--name", args->name, "name of the run (default import)");
    trtexec->add_option("--model", args->model, "model name (default: the log's --onnx or --loadEngine)");
    trtexec->add_option("--device", args->device, "device (default: cuda:N of the log's --device, else cuda:0)");
    trtexec->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
