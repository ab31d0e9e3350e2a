// `inferbench import trtexec LOG...` and `inferbench import nvidia-smi LOG...`: results measured
// elsewhere, stored as benchmarks of one run so that `summary` and every report show them beside
// inferbench's own.
#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/filter_args.hpp"
#include "core/error.hpp"
#include "core/plan/settings.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "importers/nvidia_smi_import.hpp"
#include "importers/trtexec_import.hpp"
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

int execute(const ImportArgs& args) {
    const auto run = importers::import_run("trtexec", args.name, args.logs);
    const auto benchmarks = importers::read_trtexec_logs(args.logs, {.model = args.model, .device = args.device});
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    auto results = store::ResultsStore::open(path);
    const std::int64_t run_id = importers::store_import(results, run, benchmarks);
    print_wrapped(fmt::format("imported {} trtexec log{} into {} (run {}); see `inferbench summary --db {} --run {}`",
                              benchmarks.size(), benchmarks.size() == 1 ? "" : "s", path, run_id, path, run_id));
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

std::vector<std::string> headerless_fields(const SmiImportArgs& args) {
    if (args.query_fields.empty()) return {};
    auto fields = split_list(args.query_fields);
    if (std::any_of(fields.begin(), fields.end(), [](const std::string& f) { return f.empty(); }))
        throw UserError(fmt::format("--query-gpu '{}': an empty field name; give them as nvidia-smi took them, "
                                    "e.g. index,power.draw,clocks.sm",
                                    args.query_fields));
    return fields;
}

std::string power_text(const telemetry::NvidiaSmiLog& log) {
    const auto power = importers::power_of(log);
    if (!power) return "no power readings";
    return fmt::format("{}power mean {:.1f} W, max {} W", power->one_second_average ? "1 s average " : "",
                       power->mean_w, power->max_w);
}

std::string reasons_text(const telemetry::NvidiaSmiLog& log) {
    const auto seen = importers::clock_event_reasons_seen(log);
    return seen ? "clock event reasons: " + clock_event::describe(*seen) : "no clock event reasons in the log";
}

// "h200-load-query-200ms.csv: query-csv, 10 samples, 1 GPU (NVIDIA H200), 1.808 s, power mean 691.5 W, ..."
std::string summary_line(const importers::ImportedSmiLog& parsed) {
    const auto& log = parsed.log;
    const auto gpus = importers::gpu_indices(log);
    const auto names = importers::distinct_gpu_names(log);
    const std::int64_t span = importers::span_ns(log);
    return fmt::format("{}: {}, {} sample{}, {} GPU{}{}, {}, {}, {}", parsed.file, log.format, log.samples.size(),
                       log.samples.size() == 1 ? "" : "s", gpus.size(), gpus.size() == 1 ? "" : "s",
                       names.empty() ? "" : " (" + join(names, ", ") + ")",
                       log.first_unix_ms || span > 0 ? fmt::format("{:.3f} s", ns_to_s(span)) : "no time in the log",
                       power_text(log), reasons_text(log));
}

void print_warnings(const importers::ImportedSmiLog& parsed) {
    constexpr std::size_t kShown = 10;
    const auto& warnings = parsed.log.warnings;
    for (std::size_t i = 0; i < warnings.size() && i < kShown; ++i)
        fmt::print(stderr, "{}: warning: {}\n", parsed.file, warnings[i]);
    if (warnings.size() > kShown)
        fmt::print(stderr, "{}: warning: {} more lines skipped or left out\n", parsed.file, warnings.size() - kShown);
}

int execute_smi(const SmiImportArgs& args) {
    const auto fields = headerless_fields(args);
    const std::string name = args.name.empty() ? importers::default_run_name(args.logs) : args.name;
    const auto run = importers::import_run("nvidia-smi", name, args.logs);
    const auto parsed = importers::read_nvidia_smi_logs(args.logs, {.model = args.model, .device = args.device}, fields);
    const std::string path = args.db.empty() ? resolved_db_path(RunSettings{}) : args.db;
    auto results = store::ResultsStore::open(path);
    std::vector<importers::ImportedBenchmark> benchmarks;
    for (const auto& log : parsed) benchmarks.push_back(log.benchmark);
    const std::int64_t run_id = importers::store_import(results, run, benchmarks);
    for (const auto& log : parsed) {
        print_warnings(log);
        print_wrapped(summary_line(log));
    }
    print_wrapped(fmt::format("imported {} nvidia-smi log{} into {} (run {}); see `inferbench summary --db {} --run {}`",
                              parsed.size(), parsed.size() == 1 ? "" : "s", path, run_id, path, run_id));
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
    add_db_option(*trtexec, args->db);
    trtexec->add_option("--name", args->name, "name of the run (default import)");
    trtexec->add_option("--model", args->model, "model name (default: the log's --onnx or --loadEngine)");
    trtexec->add_option("--device", args->device, "device (default: cuda:N of the log's --device, else cuda:0)");
    trtexec->callback([&context, args] { context.action = [args] { return execute(*args); }; });

    auto smi_args = std::make_shared<SmiImportArgs>();
    CLI::App* smi = import->add_subcommand(
        "nvidia-smi", "store nvidia-smi logs (-q text, -q -x XML, --query-gpu CSV or dmon) as GPU telemetry, one "
                      "benchmark per file");
    smi->add_option("logs", smi_args->logs, "nvidia-smi output files; the format is told from the content")->required();
    add_db_option(*smi, smi_args->db);
    smi->add_option("--name", smi_args->name, "name of the run (default: import nvidia-smi FILE...)");
    smi->add_option("--model", smi_args->model, "what ran while the log was written (default: the file's name)");
    smi->add_option("--device", smi_args->device, "device (default: cuda:N of the log's one GPU, gpu for several)");
    smi->add_option("--query-gpu", smi_args->query_fields,
                    "fields of a --query-gpu CSV written with noheader, comma-separated, as it was queried "
                    "(default: inferbench's own sampler fields)");
    smi->callback([&context, smi_args] { context.action = [smi_args] { return execute_smi(*smi_args); }; });
}

}  // namespace inferbench::cli
