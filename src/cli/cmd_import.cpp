// `inferbench import trtexec LOG...` and `inferbench import nvidia-smi LOG...`: results measured
// elsewhere, stored as benchmarks of one run so that `summary` and every report show them beside
// inferbench's own.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/trtexec/trtexec_log.hpp"
#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/settings.hpp"
#include "core/version.hpp"
#include "core/units.hpp"
#include "store/results_store.hpp"
#include "telemetry/nvidia_smi.hpp"

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
// A log that passed must carry a whole summary of possible figures: an `ok` benchmark with figures
// missing or made up would be shown as measured.
ParsedLog read_log(const std::string& file) {
    ParsedLog parsed{file, trtexec::parse_trtexec_log(read_regular_file(file))};
    const auto& log = parsed.log;
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
    record.status = log.passed == false ? BenchmarkStatus::failed : BenchmarkStatus::ok;
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
    results.end_run(run_id, unix_ms(), RunStatus::completed);
    fmt::print("imported {} trtexec log{} into {} (run {}); see `inferbench summary --db {} --run {}`\n",
               parsed.size(), parsed.size() == 1 ? "" : "s", path, run_id, path, run_id);
    return kExitOk;
}

// --- nvidia-smi logs: one benchmark per file, its GPU samples as the measure phase's telemetry ---

struct SmiImportArgs {
    std::vector<std::string> logs;
    std::string db;
    std::string name;  // default "import nvidia-smi FILE..."
    std::string model;
    std::string device;
    std::string query_fields;  // the columns of a --query-gpu CSV written without header
};

struct ParsedSmiLog {
    std::string file;
    telemetry::NvidiaSmiLog log;
};

std::vector<std::string> headerless_fields(const SmiImportArgs& args) {
    if (args.query_fields.empty()) return {};
    auto fields = split_list(args.query_fields);
    if (std::any_of(fields.begin(), fields.end(), [](const std::string& f) { return f.empty(); }))
        throw UserError(fmt::format("--query-gpu '{}': an empty field name; give them as nvidia-smi took them, "
                                    "e.g. index,power.draw,clocks.sm",
                                    args.query_fields));
    return fields;
}

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

// The GPU the log watched: cuda:N for one, "gpu" for several.
std::string device_of(const ParsedSmiLog& parsed, const SmiImportArgs& args) {
    if (!args.device.empty()) return args.device;
    const auto gpus = gpu_indices(parsed.log);
    return gpus.size() == 1 ? fmt::format("cuda:{}", *gpus.begin()) : "gpu";
}

store::BenchmarkRecord record_of(const ParsedSmiLog& parsed, const SmiImportArgs& args, std::int64_t run_id,
                                 std::int64_t ordinal) {
    const auto& log = parsed.log;
    store::BenchmarkRecord record;
    record.run_id = run_id;
    record.ordinal = ordinal;
    record.model = args.model.empty() ? std::filesystem::path(parsed.file).stem().string() : args.model;
    record.backend = "nvidia-smi-log";
    record.backend_version = log.driver_version;
    record.device = device_of(parsed, args);
    record.status = BenchmarkStatus::ok;
    const std::int64_t span = span_ns(log);
    record.started_unix_ms = log.first_unix_ms.value_or(unix_ms());
    record.ended_unix_ms = record.started_unix_ms + span / 1'000'000;
    if (span > 0) record.measured_wall_ns = span;
    record.settings_json = nlohmann::json{{"imported_from", std::filesystem::absolute(parsed.file).string()},
                                          {"nvidia_smi_format", log.format},
                                          {"gpu_names", log.gpu_names},
                                          {"driver_version", log.driver_version},
                                          {"cuda_version", log.cuda_version},
                                          {"nvidia_smi_warnings", log.warnings}}
                               .dump();
    return record;
}

std::string power_text(const telemetry::NvidiaSmiLog& log) {
    std::vector<double> instant, average;
    for (const auto& s : log.samples) {
        if (s.power_w) instant.push_back(*s.power_w);
        if (s.power_avg_w) average.push_back(*s.power_avg_w);
    }
    const auto& values = instant.empty() ? average : instant;
    if (values.empty()) return "no power readings";
    double sum = 0;
    for (const double v : values) sum += v;
    return fmt::format("{}power mean {:.1f} W, max {} W", instant.empty() ? "1 s average " : "",
                       sum / static_cast<double>(values.size()), *std::max_element(values.begin(), values.end()));
}

std::string reasons_text(const telemetry::NvidiaSmiLog& log) {
    std::optional<std::uint64_t> seen;
    for (const auto& s : log.samples)
        if (s.clock_event_reasons) seen = seen.value_or(0) | *s.clock_event_reasons;
    return seen ? "clock event reasons: " + clock_event::describe(*seen) : "no clock event reasons in the log";
}

// "h200-load-query-200ms.csv: query-csv, 10 samples, 1 GPU (NVIDIA H200), 1.808 s, power mean 691.5 W, ..."
std::string summary_line(const ParsedSmiLog& parsed) {
    const auto& log = parsed.log;
    const auto gpus = gpu_indices(log);
    std::vector<std::string> names;
    for (const auto& name : log.gpu_names)
        if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    const std::int64_t span = span_ns(log);
    return fmt::format("{}: {}, {} sample{}, {} GPU{}{}, {}, {}, {}", parsed.file, log.format, log.samples.size(),
                       log.samples.size() == 1 ? "" : "s", gpus.size(), gpus.size() == 1 ? "" : "s",
                       names.empty() ? "" : " (" + join(names, ", ") + ")",
                       log.first_unix_ms || span > 0 ? fmt::format("{:.3f} s", static_cast<double>(span) / 1e9)
                                                     : "no time in the log",
                       power_text(log), reasons_text(log));
}

void print_warnings(const ParsedSmiLog& parsed) {
    constexpr std::size_t kShown = 10;
    const auto& warnings = parsed.log.warnings;
    for (std::size_t i = 0; i < warnings.size() && i < kShown; ++i)
        fmt::print(stderr, "{}: warning: {}\n", parsed.file, warnings[i]);
    if (warnings.size() > kShown)
        fmt::print(stderr, "{}: warning: {} more lines skipped or left out\n", parsed.file, warnings.size() - kShown);
}

std::string default_run_name(const std::vector<std::string>& files) {
    std::vector<std::string> names;
    for (const auto& file : files) names.push_back(std::filesystem::path(file).filename().string());
    return "import nvidia-smi " + join(names, " ");
}

int execute_smi(const SmiImportArgs& args) {
    const auto fields = headerless_fields(args);
    std::vector<ParsedSmiLog> parsed;
    for (const auto& file : args.logs) parsed.push_back({file, telemetry::parse_nvidia_smi_log(read_regular_file(file), file, fields)});
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    auto results = store::ResultsStore::open(path);
    store::RunRecord run;
    run.name = args.name.empty() ? default_run_name(args.logs) : args.name;
    run.started_unix_ms = unix_ms();
    run.plan_json = nlohmann::json{{"import", "nvidia-smi"}, {"logs", args.logs}}.dump();
    run.environment_json = nlohmann::json{{"source", "nvidia-smi logs, measured elsewhere"}}.dump();
    run.git_commit = std::string(kGitCommit);
    run.inferbench_version = std::string(kVersion);
    const std::int64_t run_id = results.begin_run(run);
    for (std::size_t i = 0; i < parsed.size(); ++i) {
        const auto record = record_of(parsed[i], args, run_id, static_cast<std::int64_t>(i));
        const std::vector<TelemetrySource> sources = {
            {"nvidia-smi", "ok", fmt::format("imported from {} ({})", parsed[i].file, parsed[i].log.format)}};
        results.add_benchmark(record, store::BenchmarkData{.gpu_samples = parsed[i].log.samples,
                                                           .telemetry_sources = sources});
        print_warnings(parsed[i]);
        fmt::print("{}\n", summary_line(parsed[i]));
    }
    results.end_run(run_id, unix_ms(), RunStatus::completed);
    fmt::print("imported {} nvidia-smi log{} into {} (run {}); see `inferbench summary --db {} --run {}`\n",
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

    auto smi_args = std::make_shared<SmiImportArgs>();
    CLI::App* smi = import->add_subcommand(
        "nvidia-smi", "store nvidia-smi logs (-q text, -q -x XML, --query-gpu CSV or dmon) as GPU telemetry, one "
                      "benchmark per file");
    smi->add_option("logs", smi_args->logs, "nvidia-smi output files; the format is told from the content")->required();
    smi->add_option("--db", smi_args->db, "results database (default inferbench-results/results.db)");
    smi->add_option("--name", smi_args->name, "name of the run (default: import nvidia-smi FILE...)");
    smi->add_option("--model", smi_args->model, "what ran while the log was written (default: the file's name)");
    smi->add_option("--device", smi_args->device, "device (default: cuda:N of the log's one GPU, gpu for several)");
    smi->add_option("--query-gpu", smi_args->query_fields,
                    "fields of a --query-gpu CSV written with noheader, comma-separated, as it was queried "
                    "(default: inferbench's own sampler fields)");
    smi->callback([&context, smi_args] { context.action = [smi_args] { return execute_smi(*smi_args); }; });
}

}  // namespace inferbench::cli
