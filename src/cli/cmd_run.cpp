#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include <fmt/format.h>

#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "backends/registry.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan_scenario.hpp"
#include "core/plan/settings.hpp"
#include "core/units.hpp"
#include "findings/findings.hpp"
#include "models/decoder_models.hpp"
#include "models/zoo.hpp"
#include "report/summary_table.hpp"
#include "runner/orchestrator/interrupt.hpp"
#include "runner/orchestrator/orchestrator.hpp"
#include "runner/orchestrator/resume.hpp"
#include "runner/orchestrator/shard_order.hpp"

namespace inferbench::cli {

PlanVocabulary plan_vocabulary(const BackendRegistry& registry) {
    std::vector<std::string> models = models::zoo_names();
    for (std::string& name : models::decoder_model_names()) models.push_back(std::move(name));
    return {std::move(models), registry.names()};
}

namespace {

struct RunArgs {
    std::string plan_file;
    std::vector<std::pair<std::string, std::string>> overrides;  // (flag, key) -> value, in command-line order
    std::vector<std::string> sets;
    OutputOptions output;
    bool dry_run = false;
    bool quiet = false;
    std::string resume;  // a run id or "latest"; empty: a new run
    bool continue_run = false;  // go on with the store's unfinished run of this plan (and shard), if there is one
};

// What may go with --resume: where the database is and how to print. The plan is the run's own.
constexpr const char* kResumeFlags[] = {"--db", "--out"};

// Flags that set one plan key each; their values are applied in this order, then every --set. A flag that
// sets a run setting says that setting's help (core/plan/settings: one text per setting, the one the plan keys
// below show); the axes, which have no entry there, say their own.
struct FlagKey {
    const char* flag;
    const char* key;
    const char* axis_help = nullptr;
};

constexpr FlagKey kFlagKeys[] = {
    {"--model", "models", "models (zoo names or files), comma-separated"},
    {"--backend", "backends", "backends, comma-separated"},
    {"--device", "devices", "devices: cpu, cuda, cuda:N; comma-separated"},
    {"--precision", "precisions", "precisions: fp32, fp16, bf16, int8, fp8, int4; comma-separated"},
    {"--batch", "batch_sizes", "batch sizes, comma-separated, e.g. 1,8,32"},
    {"--input-tokens", "input_tokens", "decoder models' prompt lengths in tokens, comma-separated, e.g. 128,1024"},
    {"--output-tokens", "output_tokens", "decoder models' generated tokens per sequence, comma-separated"},
    {"--duration", "duration"},
    {"--scenario", "scenario"},
    {"--warmup", "warmup"},
    {"--warmup-iterations", "warmup_iterations"},
    {"--min-iterations", "min_iterations"},
    {"--max-iterations", "max_iterations"},
    {"--timeout", "timeout"},
    {"--seed", "seed"},
    {"--inputs", "inputs"},
    {"--name", "name"},
    {"--out", "output_dir"},
    {"--db", "db"},
    {"--parallel", "parallel"},
    {"--shard", "shard"},
};

std::string flag_help(const FlagKey& flag) {
    if (const SettingField* field = find_setting(flag.key)) return std::string(field->help);
    if (flag.axis_help) return flag.axis_help;
    throw std::logic_error(
        fmt::format("{} sets {}, which is neither a setting nor has a help of its own", flag.flag, flag.key));
}

// An axis's values as the plan file writes them.
template <typename T>
std::string axis_text(const std::vector<T>& values) {
    std::vector<std::string> texts;
    for (const T& value : values) texts.emplace_back(to_string(value));
    return join(texts, ", ");
}

std::string settings_help() {
    std::string text = "\nPlan keys (YAML, or --set KEY=VALUE) and their defaults:\n";
    const Plan defaults;
    text += fmt::format("  {:<18} {:<10} {}\n", "models", "list", join(defaults.models, ", "));
    text += fmt::format("  {:<18} {:<10} {}\n", "backends", "list", join(defaults.backends, ", "));
    text += fmt::format("  {:<18} {:<10} {}\n", "devices", "list", axis_text(defaults.devices));
    text += fmt::format("  {:<18} {:<10} {}\n", "precisions", "list", axis_text(defaults.precisions));
    text += fmt::format("  {:<18} {:<10} {}\n", "batch_sizes", "list", fmt::format("{}", fmt::join(defaults.batch_sizes, ", ")));
    text += fmt::format("  {:<18} {:<10} {:<22} {}\n", "input_tokens", "list",
                        fmt::format("{}", fmt::join(defaults.input_tokens, ", ")),
                        "decoder models only: prompt tokens per sequence");
    text += fmt::format("  {:<18} {:<10} {:<22} {}\n", "output_tokens", "list",
                        fmt::format("{}", fmt::join(defaults.output_tokens, ", ")),
                        "decoder models only: tokens generated per sequence, the first included");
    for (const auto& field : setting_fields()) {
        std::string value = setting_text(defaults.settings, field);
        text += fmt::format("  {:<18} {:<10} {:<22} {}\n", field.key, type_name(field.type), value.empty() ? "-" : value,
                            field.help);
    }
    text += "  exclude            list of rules, e.g. [{backend: onnxruntime, batch_size: 8}]\n";
    text += "  backend_options    map: backend -> {option: value}; `inferbench list backends --options` lists them\n";
    text += "  pipeline           map: image pipeline cells (docs/usage.md); its keys, also --set pipeline.KEY=VALUE:\n";
    PipelineSettings shown;
    shown.steps = PipelineSteps{};
    for (const PipelineKey& key : pipeline_keys())
        text += fmt::format("    {:<22} {:<22} {}\n", key.key, key.key == "images" ? "-" : key.get(shown), key.help);
    text += fmt::format("Batch sizes go from 1 to {}; a plan expands to at most {} benchmarks.\n", kMaxBatchSize,
                        kMaxBenchmarks);
    text += fmt::format(
        "\nExit codes: {} all benchmarks ok (some may be skipped); {} at least one failed; {} bad input; "
        "{} nothing ran (every benchmark skipped); {} the results store could not take what was "
        "measured (the table still shows it, a recovery file holds it); {} interrupted by Ctrl-C, {} by "
        "SIGTERM, {} by SIGHUP. ({} is `compare --fail-on-regression`'s.)\n",
        kExitOk, kExitFailure, kExitUsage, kExitNothingRan, kExitNotStored, kExitInterrupted, 128 + SIGTERM,
        128 + SIGHUP, kExitRegression);
    return text;
}

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
    check_plan(plan);
    return plan;
}

// " (repeat 2/3)" where a plan repeats its cells.
std::string repeat_text(std::int64_t repeat, std::int64_t repeats) {
    return repeats > 1 ? fmt::format(" (repeat {}/{})", repeat + 1, repeats) : "";
}

// Lists the benchmarks of a checked plan (execute() checks what `run` checks before it stores anything, so a
// plan that passes --dry-run runs) in the order they would run (repeats interleaved).
// One benchmark of a --dry-run listing; one the run would skip (the run's own rule, runner::planned_skips) is marked
// with the reason.
std::string listed_line(const std::vector<BenchmarkSpec>& cells, const std::vector<std::optional<std::string>>& skips,
                        const CellRepeat& b, std::int64_t repeats) {
    const auto& skip = skips[b.ordinal];
    return fmt::format("{:>4}  {}{}{}\n", b.ordinal + 1, cells[b.ordinal].label(), repeat_text(b.repeat, repeats),
                       skip ? "  skipped: " + *skip : "");
}

// "(shard 2/4: 3 of the plan's 12 cells x 2 repeats)", "(3 cells x 2 repeats)" or nothing.
std::string dry_run_extent(const Plan& plan, std::size_t cells, std::size_t listed) {
    const std::int64_t repeats = plan.settings.repeats;
    const std::string times = repeats > 1 ? fmt::format(" x {} repeats", repeats) : "";
    if (plan.settings.shard)
        return fmt::format(" (shard {}: {} of the plan's {} cells{})", to_string(*plan.settings.shard),
                           listed / static_cast<std::size_t>(repeats), cells, times);
    return repeats > 1 ? fmt::format(" ({} cells{})", cells, times) : "";
}

int print_dry_run(const Plan& plan, const BackendRegistry& registry) {
    const auto cells = expand_matrix(plan, models::is_decoder_model);
    const auto order = runner::planned_order(plan, cells);
    const auto skips = runner::planned_skips(cells, registry);
    const std::int64_t repeats = plan.settings.repeats;
    std::string listing;  // one write: a 10,000-cell plan lists at once
    for (const CellRepeat& b : order) listing += listed_line(cells, skips, b, repeats);
    fmt::print("{}", listing);
    const auto skipped =
        std::count_if(order.begin(), order.end(), [&](const CellRepeat& b) { return skips[b.ordinal].has_value(); });
    const std::string skipped_text = skipped > 0 ? fmt::format(", {} of them would be skipped", skipped) : "";
    fmt::print(stderr, "{} benchmarks{}{}; results would go to {}\n", order.size(),
               dry_run_extent(plan, cells.size(), order.size()), skipped_text, resolved_db_path(plan.settings));
    return kExitOk;
}

// The run's table: what the store holds, and what it could not take from memory, in plan order, a row
// per cell (its repeats combined).
std::vector<analysis::BenchmarkSummary> run_summaries(const store::ResultsStore& results, const runner::RunResult& run) {
    std::vector<analysis::BenchmarkSummary> summaries;
    try {
        summaries = analysis::summarize_run(results, run.run_id);
    } catch (const std::exception&) {
        if (!run.store_failure) throw;  // a store that cannot be read back now: the unstored rows still show
    }
    for (const auto& measured : run.unstored) summaries.push_back(analysis::summarize_measured(measured));
    std::stable_sort(summaries.begin(), summaries.end(),
                     [](const auto& a, const auto& b) {
                         return std::pair(a.benchmark.ordinal, a.benchmark.repeat) <
                                std::pair(b.benchmark.ordinal, b.benchmark.repeat);
                     });
    return analysis::combine_cells(summaries);
}

// One line: what failed, where the measured results are now, what became of the run.
std::string store_failure_line(const store::ResultsStore& results, const runner::RunResult& run) {
    const runner::StoreFailure& failure = *run.store_failure;
    std::string line = failure.reason + "; the plan stopped there";
    if (!run.unstored.empty()) {
        const auto& recovery = failure.recovery;
        line += recovery.path.empty()
                    ? fmt::format("; no recovery file could be written ({}): the table above is all that is kept of "
                                  "{} benchmark(s)",
                                  recovery.error, run.unstored.size())
                    : fmt::format("; {} benchmark(s) it could not take are in {} (inferbench summary --db {})",
                                  run.unstored.size(), recovery.path.string(), recovery.path.string());
    }
    line += failure.run_marked_failed ? fmt::format("; run {} is marked failed in {}", run.run_id, results.path().string())
                                      : fmt::format("; run {} could not be marked and reads 'running' in {}",
                                                    run.run_id, results.path().string());
    return line + "; free space (or fix the cause) and run again, or use another --db";
}

using Runner = std::function<runner::RunResult(const runner::RunnerOptions&)>;

// "3 findings: inferbench explain": what `explain` would say about the run, counted, so that a person
// who reads only the summary table knows there is more.
// Counting a run's findings reads every iteration of it into memory (findings/evidence, tens of bytes each);
// beyond this many the hint names the command without a count, so that `run` stays in flat memory however
// long its cells ran (`explain` reads them when asked).
constexpr std::int64_t kFindingsCountedUpTo = 2'000'000;

void print_findings_hint(const store::ResultsStore& results, std::int64_t run_id) {
    const auto benchmarks = results.benchmarks(run_id);
    const bool default_db = std::filesystem::path(resolved_db_path(RunSettings{})) == results.path();
    const std::string command =
        fmt::format("inferbench explain{} --run {}", default_db ? "" : " --db " + results.path().string(), run_id);
    std::int64_t iterations = 0;
    for (const auto& benchmark : benchmarks) iterations += results.iteration_count(benchmark.benchmark_id);
    if (iterations > kFindingsCountedUpTo) {
        fmt::print(stderr, "findings: {} (not counted here: counting reads the run's {} iterations into memory)\n",
                   command, iterations);
        return;
    }
    const auto found = findings::explain(results, benchmarks);
    if (found.empty()) return;
    fmt::print(stderr, "{} finding{}: {}\n", found.size(), found.size() == 1 ? "" : "s", command);
}

// Runs (a new run or a resumed one), prints the run's summary and says how it went; returns the exit code.
int run_and_report(const RunArgs& args, store::ResultsStore& results, const Runner& runner) {
    runner::install_interrupt_handler();
    results.give_up_waiting_when(runner::interrupt_requested);
    ProgressPrinter progress(stderr);
    runner::RunnerOptions options;
    options.worker_executable = std::filesystem::read_symlink("/proc/self/exe");
    if (!args.quiet) options.on_progress = std::ref(progress);
    const runner::RunResult run = runner(options);
    print_summary_tables(results, run_summaries(results, run), args.output);
    fmt::print(stderr, "results: {} (run {}{}): {} ok, {} failed, {} skipped{}{}\n", results.path().string(), run.run_id,
               args.resume.empty() ? "" : ", resumed", run.count(BenchmarkStatus::ok),
               run.count(BenchmarkStatus::failed), run.count(BenchmarkStatus::skipped),
               run.unstored.empty() ? "" : fmt::format(", {} not stored there", run.unstored.size()),
               run.interrupted ? fmt::format(", interrupted by {}", runner::interrupt_name()) : "");
    if (!args.quiet && !run.store_failure) print_findings_hint(results, run.run_id);
    if (run.store_failure) {
        fmt::print(stderr, "inferbench: error: {}\n", store_failure_line(results, run));
        return kExitNotStored;
    }
    if (run.interrupted) return runner::interrupt_exit_code();
    if (run.count(BenchmarkStatus::failed) > 0) return kExitFailure;
    if (run.count(BenchmarkStatus::ok) == 0) {
        fmt::print(stderr, "inferbench: nothing was measured: {}\n",
                   run.benchmarks.empty() ? "the exclude rules remove every benchmark"
                                          : "every benchmark was skipped (reasons above)");
        return kExitNothingRan;
    }
    return kExitOk;
}

void require_resume_alone(const RunArgs& args) {
    std::vector<std::string> plan_flags;
    if (!args.plan_file.empty()) plan_flags.push_back("PLAN " + args.plan_file);
    for (const auto& [flag, value] : args.overrides)
        if (std::find(std::begin(kResumeFlags), std::end(kResumeFlags), flag) == std::end(kResumeFlags))
            plan_flags.push_back(flag);
    if (!args.sets.empty()) plan_flags.emplace_back("--set");
    if (plan_flags.empty()) return;
    throw UserError(fmt::format("--resume {} runs the run's own stored plan, so it takes no plan input ({}); "
                                "only --db, --out, --quiet, --dry-run, --format and --json go with it",
                                args.resume, join(plan_flags, ", ")));
}

// Goes on with run `which` ("latest" or an id) of `results`: its stored plan's benchmarks without an ok result.
int resume_run(const RunArgs& args, const BackendRegistry& registry, store::ResultsStore& results,
               std::string_view which) {
    const auto vocab = plan_vocabulary(registry);
    const runner::ResumePoint point = runner::find_resume_point(results, which, vocab);
    if (point.pending.empty()) {
        const bool marked = !args.dry_run && runner::complete_if_all_ok(results, point);
        fmt::print(stderr, "run {}: all {} benchmarks are ok; nothing to resume{}\n", point.run.run_id,
                   point.benchmarks,
                   marked ? " (it was marked interrupted, as its orchestrator stopped before ending it; now marked "
                                   "completed)"
                          : "");
        return kExitOk;
    }
    const auto cells = expand_matrix(point.plan, models::is_decoder_model);
    if (args.dry_run) {
        const auto skips = runner::planned_skips(cells, registry);
        for (const CellRepeat& b : point.pending)
            fmt::print("{}", listed_line(cells, skips, b, point.plan.settings.repeats));
        fmt::print(stderr, "{} of {} benchmarks of run {} would run again\n", point.pending.size(), point.benchmarks,
                   point.run.run_id);
        return kExitOk;
    }
    fmt::print(stderr, "resuming run {}{}: {} of {} benchmarks have no ok result\n", point.run.run_id,
               point.run.shard ? " (shard " + to_string(*point.run.shard) + ")" : "", point.pending.size(),
               point.benchmarks);
    const runner::ResumeTarget target{point.run.run_id, point.pending};
    RunArgs resumed = args;  // the summary line says "resumed"
    resumed.resume = std::string(which);
    return run_and_report(resumed, results, [&](const runner::RunnerOptions& options) {
        return runner::resume_plan(point.plan, registry, results, options, target);
    });
}

int execute_resume(const RunArgs& args, const BackendRegistry& registry) {
    require_resume_alone(args);
    const std::string db = resolved_db_path(build_plan(args, plan_vocabulary(registry)).settings);
    if (store::store_file_missing(db))
        throw UserError(fmt::format("--resume {}: no results database at {}; give --db PATH", args.resume, db));
    auto results = store::ResultsStore::open(db);
    return resume_run(args, registry, results, args.resume);
}

// --continue: the store's latest run of this plan and shard, when it has not completed, goes on where it stopped
// (a Slurm task started again after a requeue or preemption); a completed one leaves nothing to do; without one
// the plan starts. Nothing where a new run should start.
std::optional<int> continue_run(const RunArgs& args, const Plan& plan, const BackendRegistry& registry) {
    const std::string db = resolved_db_path(plan.settings);
    // A shared store (PostgreSQL) always "exists": the store says what it holds.
    if (store::store_file_missing(db)) return std::nullopt;
    auto results = store::ResultsStore::open(db, args.dry_run ? store::ResultsStore::Access::read
                                                              : store::ResultsStore::Access::write);
    const auto run = runner::latest_run_of(results, plan);
    if (!run) return std::nullopt;
    if (run->status == RunStatus::completed) {
        fmt::print(stderr, "run {} in {} completed this plan{}; nothing to run (--continue)\n", run->run_id, db,
                   plan.settings.shard ? " (shard " + to_string(*plan.settings.shard) + ")" : "");
        return kExitOk;
    }
    return resume_run(args, registry, results, std::to_string(run->run_id));
}

// The output flags checked as the run's table will use them, on the summary table without rows: a bad
// --format or a --columns name the summary has not fails before anything runs or is stored.
void check_output_options(const OutputOptions& output) {
    report::render(report::summary_table({}), report::parse_format(output.resolved()), render_options(output));
}

int execute(const RunArgs& args) {
    check_output_options(args.output);
    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    if (!args.resume.empty()) return execute_resume(args, registry);
    Plan plan = build_plan(args, plan_vocabulary(registry));
    const auto raised = raise_min_iterations_for_verdict(plan);
    // Said once the plan is known to run: bad input gets its one error line alone.
    runner::check_backend_options(plan, registry);
    // A shard without a cell is refused before any store is opened (a dry run's listing refuses it itself).
    if (plan.settings.shard && !args.dry_run)
        runner::planned_order(plan, expand_matrix(plan, models::is_decoder_model));
    if (raised && !args.quiet)
        fmt::print(stderr, "{}", report::wrap_paragraph(*raised, report::terminal_width(STDERR_FILENO)));
    if (args.continue_run)
        if (const auto code = continue_run(args, plan, registry)) return *code;
    if (args.dry_run) return print_dry_run(plan, registry);
    auto results = store::ResultsStore::open(resolved_db_path(plan.settings));
    return run_and_report(args, results,
                          [&](const runner::RunnerOptions& options) { return runner::run_plan(plan, registry, results, options); });
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
               flag_help(flag))
            ->type_size(1)
            ->allow_extra_args(false)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
    run->add_option("--set", args->sets,
                     "set any plan key, KEY=VALUE (repeatable); backend options as backend_options.BACKEND.OPTION=V[,V...]")->allow_extra_args(false);
    run->add_flag("--dry-run", args->dry_run, "list the benchmarks the plan expands to, run nothing");
    run->add_flag("--quiet", args->quiet, "no progress lines");
    run->add_option("--resume", args->resume,
                    "go on with run RUN_ID (or latest): run only the benchmarks of its stored plan that have no ok "
                    "result, into the same run; takes no plan input (only --db, --out, --quiet, --dry-run, --format)")
        ->option_text("RUN_ID|latest");
    run->add_flag("--continue", args->continue_run,
                  "go on with this plan's (and shard's) unfinished run in the database if there is one (only its "
                  "benchmarks without an ok result run), else start the plan; what `slurm submit`'s tasks run, so a "
                  "requeued task resumes")
        ->excludes("--resume");
    args->output.add_to(*run);
    run->footer(settings_help());
    run->callback([&context, args] { context.action = [args] { return execute(*args); }; });
}

}  // namespace inferbench::cli
