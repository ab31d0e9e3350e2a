#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "analysis/summary.hpp"
#include "backends/registry.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/matrix.hpp"
#include "core/settings.hpp"
#include "core/units.hpp"
#include "models/zoo.hpp"
#include "report/summary_table.hpp"
#include "runner/interrupt.hpp"
#include "runner/orchestrator.hpp"

namespace inferbench::cli {
namespace {

struct RunArgs {
    std::string plan_file;
    std::vector<std::pair<std::string, std::string>> overrides;  // (flag, key) -> value, in command-line order
    std::vector<std::string> sets;
    OutputOptions output;
    bool dry_run = false;
    bool quiet = false;
};

// Flags that set one plan key each; their values are applied in this order, then every --set.
struct FlagKey {
    const char* flag;
    const char* key;
    const char* help;
};

constexpr FlagKey kFlagKeys[] = {
    {"--model", "models", "models (zoo names or files), comma-separated"},
    {"--backend", "backends", "backends, comma-separated"},
    {"--device", "devices", "devices: cpu, cuda, cuda:N; comma-separated"},
    {"--precision", "precisions", "precisions: fp32, fp16, bf16, int8, fp8; comma-separated"},
    {"--batch", "batch_sizes", "batch sizes, comma-separated, e.g. 1,8,32"},
    {"--duration", "duration", "minimum measured time per benchmark, e.g. 10s"},
    {"--warmup", "warmup", "minimum warm-up time, e.g. 1s"},
    {"--warmup-iterations", "warmup_iterations", "minimum warm-up iterations"},
    {"--min-iterations", "min_iterations", "minimum measured iterations"},
    {"--max-iterations", "max_iterations", "maximum measured iterations (0: no limit)"},
    {"--timeout", "timeout", "per-benchmark timeout, e.g. 10m"},
    {"--seed", "seed", "random seed"},
    {"--name", "name", "test id stored with the run"},
    {"--out", "output_dir", "output folder"},
    {"--db", "db", "results database path"},
};

std::string settings_help() {
    std::string text = "\nPlan keys (YAML, or --set KEY=VALUE) and their defaults:\n";
    const Plan defaults;
    text += fmt::format("  {:<18} {:<10} {}\n", "models", "list", join(defaults.models, ", "));
    text += fmt::format("  {:<18} {:<10} {}\n", "backends", "list", join(defaults.backends, ", "));
    text += fmt::format("  {:<18} {:<10} {}\n", "devices", "list", join(defaults.devices, ", "));
    text += fmt::format("  {:<18} {:<10} {}\n", "precisions", "list", join(defaults.precisions, ", "));
    text += fmt::format("  {:<18} {:<10} {}\n", "batch_sizes", "list", fmt::format("{}", fmt::join(defaults.batch_sizes, ", ")));
    for (const auto& field : setting_fields()) {
        std::string value = setting_text(defaults.settings, field);
        text += fmt::format("  {:<18} {:<10} {:<22} {}\n", field.key, type_name(field.type), value.empty() ? "-" : value,
                            field.help);
    }
    text += "  exclude            list of rules, e.g. [{backend: onnxruntime, batch_size: 8}]\n";
    text += "  backend_options    map: backend -> {option: value}; see `inferbench list backends`\n";
    return text;
}

PlanVocabulary vocabulary(const BackendRegistry& registry) { return {models::zoo_names(), registry.names()}; }

Plan build_plan(const RunArgs& args, const PlanVocabulary& vocab) {
    Plan plan = args.plan_file.empty() ? Plan{} : load_plan_file(args.plan_file, vocab);
    for (const auto& [flag, value] : args.overrides) {
        const auto* entry = std::find_if(std::begin(kFlagKeys), std::end(kFlagKeys),
                                         [&](const FlagKey& f) { return flag == f.flag; });
        apply_override(plan, entry->key, value, fmt::format("{} {}", flag, value), vocab);
    }
    for (const auto& set : args.sets) {
        const auto eq = set.find('=');
        if (eq == std::string::npos) throw UserError(fmt::format("--set {}: expected KEY=VALUE", set));
        apply_override(plan, set.substr(0, eq), set.substr(eq + 1), fmt::format("--set {}", set), vocab);
    }
    return plan;
}

int print_dry_run(const Plan& plan) {
    const auto cells = expand_matrix(plan);
    for (std::size_t i = 0; i < cells.size(); ++i) fmt::print("{:>4}  {}\n", i + 1, cells[i].label());
    fmt::print(stderr, "{} benchmarks; results would go to {}\n", cells.size(), resolved_db_path(plan.settings));
    return kExitOk;
}

int execute(const RunArgs& args) {
    report::parse_format(args.output.resolved());  // a bad --format fails before anything runs
    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    const Plan plan = build_plan(args, vocabulary(registry));
    if (args.dry_run) return print_dry_run(plan);
    auto results = store::ResultsStore::open(resolved_db_path(plan.settings));
    install_interrupt_handler();
    ProgressPrinter progress(stderr);
    RunnerOptions options;
    options.worker_executable = std::filesystem::read_symlink("/proc/self/exe");
    if (!args.quiet) options.on_progress = std::ref(progress);
    const RunResult run = run_plan(plan, registry, results, options);
    print_table(report::summary_table(analysis::summarize_run(results, run.run_id)), args.output);
    fmt::print(stderr, "results: {} (run {}): {} ok, {} failed, {} skipped{}\n", results.path().string(), run.run_id,
               run.count("ok"), run.count("failed"), run.count("skipped"),
               run.interrupted ? ", interrupted by Ctrl-C" : "");
    if (run.interrupted) return kExitInterrupted;
    return run.count("failed") > 0 ? kExitFailure : kExitOk;
}

}  // namespace

void add_run_command(CLI::App& app, CommandContext& context) {
    auto args = std::make_shared<RunArgs>();
    CLI::App* run = app.add_subcommand("run", "run a benchmark plan (the default plan when no PLAN is given)");
    run->add_option("plan", args->plan_file, "plan file (YAML)")->check(CLI::ExistingFile);
    for (const auto& flag : kFlagKeys) {
        run->add_option_function<std::vector<std::string>>(
               flag.flag, [args, name = std::string(flag.flag)](const std::vector<std::string>& values) {
                   for (const auto& v : values) args->overrides.emplace_back(name, v);
               },
               flag.help)
            ->type_size(1)
            ->allow_extra_args(false)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    run->add_option("--set", args->sets,
                     "set any plan key, KEY=VALUE (repeatable); backend options as backend_options.BACKEND.OPTION=V[,V...]")->allow_extra_args(false);
    run->add_flag("--dry-run", args->dry_run, "list the benchmarks the plan expands to, run nothing");
    run->add_flag("--quiet", args->quiet, "no progress lines");
    args->output.add_to(*run);
    run->footer(settings_help());
    run->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
