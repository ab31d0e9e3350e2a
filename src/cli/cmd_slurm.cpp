// `inferbench slurm submit`: a plan as a Slurm job array, one task per shard (runner/slurm/job_script);
// `inferbench slurm status`: each shard's benchmarks from its store beside its task's state in Slurm.
#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan_scenario.hpp"
#include "models/decoder_models.hpp"
#include "runner/orchestrator/shard_order.hpp"
#include "runner/slurm/job_script.hpp"
#include "runner/slurm/slurm_commands.hpp"

namespace inferbench::cli {
namespace {

struct SubmitArgs {
    std::string plan_file;
    std::vector<std::string> sets;
    std::string partition, gres, time, db, dir;
    std::int64_t max_parallel = 0;
    std::int64_t shards = 0;  // 0: one per model and kind of device
    bool dry_run = false;
};

// The plan as every task reads it (the run command's rules: the file, then each --set, then the checks), from the
// job's copy of it.
Plan task_plan(const std::string& plan_file, const std::vector<std::string>& sets) {
    const auto registry = BackendRegistry::discover(BackendRegistry::default_search_dirs());
    const auto vocab = plan_vocabulary(registry);
    Plan plan = load_plan_file(plan_file, vocab);
    for (const auto& set : sets) {
        const auto eq = set.find('=');
        if (eq == std::string::npos) throw UserError(fmt::format("--set {}: expected KEY=VALUE", set));
        apply_override(plan, set.substr(0, eq), set.substr(eq + 1), fmt::format("--set {}", set), vocab);
    }
    check_plan(plan);
    raise_min_iterations_for_verdict(plan);
    return plan;
}

// One shard per model on each kind of device: each model's files are made once, by one task.
std::int64_t default_shards(const std::vector<BenchmarkSpec>& cells) {
    std::set<std::pair<DeviceKind, std::string>> groups;
    for (const auto& cell : cells) groups.emplace(cell.device.kind, cell.model);
    return std::max<std::int64_t>(static_cast<std::int64_t>(groups.size()), 1);
}

std::int64_t shard_count(const SubmitArgs& args, const Plan& plan, const std::vector<BenchmarkSpec>& cells) {
    if (plan.settings.shard)
        throw UserError(
            fmt::format("{}: the plan sets shard {}; `slurm submit` splits the plan itself (--shards N), "
                        "so leave shard out",
                        plan.source, to_string(*plan.settings.shard)));
    if (cells.empty()) throw UserError(fmt::format("{}: the plan has no benchmark to submit", plan.source));
    if (args.shards > static_cast<std::int64_t>(cells.size()))
        throw UserError(fmt::format("--shards {}: the plan has {} cell(s), so give at most {} shards", args.shards,
                                    cells.size(), cells.size()));
    return args.shards > 0 ? args.shards : default_shards(cells);
}

std::string timestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm local{};
    localtime_r(&now, &local);
    char text[32];
    std::strftime(text, sizeof text, "%Y%m%d-%H%M%S", &local);
    return text;
}

std::filesystem::path job_folder(const SubmitArgs& args) {
    const std::filesystem::path folder =
        args.dir.empty() ? std::filesystem::path("inferbench-slurm") /
                               fmt::format("{}-{}", std::filesystem::path(args.plan_file).stem().string(), timestamp())
                         : std::filesystem::path(args.dir);
    return std::filesystem::absolute(folder).lexically_normal();
}

std::int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// --db: a store's URL (postgresql://...) every task writes, or a folder for the shards' SQLite files.
void set_stores(runner::SlurmJob& job, const std::string& db) {
    if (db.find("://") != std::string::npos) {
        job.db = db;
        return;
    }
    job.shard_folder =
        std::filesystem::absolute(db.empty() ? job.folder / "shards" : std::filesystem::path(db)).lexically_normal();
}

// The folder with its plan copy, script and manifest; the caller removes it where the submission fails.
void write_job_folder(const runner::SlurmJob& job, const std::string& plan_text) {
    std::filesystem::create_directories(job.folder / "logs");
    if (job.db.empty()) std::filesystem::create_directories(job.shard_folder);
    write_file_atomically(job.plan_file, plan_text);
    write_file_atomically(job.script_path(), runner::sbatch_script(job));
    write_file_atomically(job.folder / "manifest.json", to_json(job).dump(2) + "\n");
}

int submit(const SubmitArgs& args) {
    if (args.max_parallel < 0) throw UserError("--max-parallel: give a number of tasks >= 1 (0: no limit)");
    const std::string plan_text = read_regular_file(args.plan_file);
    const Plan plan = task_plan(args.plan_file, args.sets);
    const auto cells = expand_matrix(plan, models::is_decoder_model);
    runner::SlurmJob job;
    job.shards = shard_count(args, plan, cells);
    job.folder = job_folder(args);
    job.plan_file = job.folder / "plan.yaml";
    job.plan_source = args.plan_file;
    job.sets = args.sets;
    job.max_parallel = args.max_parallel;
    set_stores(job, args.db);
    job.partition = args.partition;
    job.gres = args.gres;
    job.time = args.time;
    job.executable = std::filesystem::read_symlink("/proc/self/exe");
    if (args.dry_run) {
        fmt::print("{}", runner::sbatch_script(job));
        fmt::print(stderr,
                   "{} tasks (shards) of the plan's {} cells would be submitted from {}; nothing was written or "
                   "submitted (--dry-run)\n",
                   job.shards, cells.size(), job.folder.string());
        return kExitOk;
    }
    if (std::filesystem::exists(job.folder) && !std::filesystem::is_empty(job.folder))
        throw UserError(
            fmt::format("{}: the job folder exists and is not empty; give another --dir", job.folder.string()));
    const bool new_shard_folder = job.db.empty() && !std::filesystem::exists(job.shard_folder);
    try {
        write_job_folder(job, plan_text);
        job.job_id = runner::submit_batch_script(job.script_path());
    } catch (...) {
        std::error_code ignored;
        std::filesystem::remove_all(job.folder, ignored);  // a refused job leaves nothing behind
        if (new_shard_folder) std::filesystem::remove(job.shard_folder, ignored);
        throw;
    }
    job.submitted_unix_ms = unix_ms_now();
    write_file_atomically(job.folder / "manifest.json", to_json(job).dump(2) + "\n");
    fmt::print("{}\n", job.job_id);
    fmt::print(stderr,
               "submitted job {}: {} tasks, one per shard of the plan's {} cells; folder {}; `inferbench slurm "
               "status {}` shows their progress\n",
               job.job_id, job.shards, cells.size(), job.folder.string(), job.folder.string());
    return kExitOk;
}

// A shard's benchmarks as its store holds them.
struct ShardProgress {
    std::int64_t cells = 0, benchmarks = 0;
    std::int64_t ok = 0, failed = 0, skipped = 0;
    std::optional<store::RunRecord> run;
    std::int64_t pending() const { return benchmarks - ok - failed - skipped; }
};

// The latest run in `store` of the job's shard K: its shard, and its plan read from the job's copy of the plan.
std::optional<store::RunRecord> shard_run(const store::ResultsStore& results, const runner::SlurmJob& job,
                                          const Shard& shard) {
    const auto runs = results.runs();
    for (auto run = runs.rbegin(); run != runs.rend(); ++run) {
        if (run->shard != shard) continue;
        const auto plan = nlohmann::json::parse(run->plan_json, nullptr, false);
        if (plan.is_object() && plan.value("source", "") == job.plan_file.string()) return *run;
    }
    return std::nullopt;
}

ShardProgress shard_progress(const runner::SlurmJob& job, const std::vector<std::size_t>& cells, std::int64_t repeats,
                             std::int64_t k) {
    ShardProgress progress;
    progress.cells = static_cast<std::int64_t>(cells.size());
    progress.benchmarks = progress.cells * repeats;
    const std::string where = job.store_of(k);
    if (where.find("://") == std::string::npos && !std::filesystem::exists(where)) return progress;
    const auto results = store::ResultsStore::open(where, store::ResultsStore::Access::read);
    progress.run = shard_run(results, job, Shard{k, job.shards});
    if (!progress.run) return progress;
    for (const auto& record : results.benchmarks(progress.run->run_id)) {
        progress.ok += record.status == BenchmarkStatus::ok ? 1 : 0;
        progress.failed += record.status == BenchmarkStatus::failed ? 1 : 0;
        progress.skipped += record.status == BenchmarkStatus::skipped ? 1 : 0;
    }
    return progress;
}

report::Table status_table(const runner::SlurmJob& job, const std::vector<ShardProgress>& shards,
                           const std::map<std::int64_t, runner::TaskState>& tasks) {
    report::Table table{"slurm_status",
                        {report::identity_column("shard", "shard"),
                         {"cells", "cells", 0},
                         {"ok", "ok", 0},
                         {"failed", "failed", 0},
                         {"skipped", "skipped", 0},
                         {"pending", "pending", 0},
                         {"run_id", "run", 0},
                         {"run_status", "run status"},
                         {"slurm_state", "Slurm state"},
                         {"slurm_reason", "waiting for"},
                         {"restarts", "restarts", 0},
                         {"node", "node"}},
                        {}};
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const auto k = static_cast<std::int64_t>(i + 1);
        const ShardProgress& p = shards[i];
        std::vector<report::Cell> row{to_string(Shard{k, job.shards}), p.cells, p.ok, p.failed, p.skipped, p.pending()};
        row.push_back(p.run ? report::Cell{p.run->run_id} : report::Cell{report::Null{}});
        row.push_back(p.run ? report::Cell{std::string(to_string(p.run->status))}
                            : report::Cell{std::string("not begun")});
        const auto task = tasks.find(k);
        if (task == tasks.end()) {
            row.insert(row.end(),
                       {std::string("not known to Slurm now"), report::Null{}, report::Null{}, report::Null{}});
        } else {
            const runner::TaskState& s = task->second;
            row.insert(row.end(), {s.state, s.reason == "None" ? report::Cell{report::Null{}} : report::Cell{s.reason},
                                   s.restarts, s.node.empty() ? report::Cell{report::Null{}} : report::Cell{s.node}});
        }
        table.rows.push_back(std::move(row));
    }
    return table;
}

// The newest job folder under ./inferbench-slurm, where `slurm submit` puts them by default.
std::filesystem::path latest_job_folder() {
    const std::filesystem::path root = "inferbench-slurm";
    std::optional<std::filesystem::path> latest;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(root, error))
        if (entry.is_directory() && std::filesystem::exists(entry.path() / "manifest.json") &&
            (!latest || entry.path().filename() > latest->filename()))
            latest = entry.path();
    if (!latest)
        throw UserError("no job folder in ./inferbench-slurm; give the folder `inferbench slurm submit` printed");
    return *latest;
}

int status(const std::string& dir, const OutputOptions& output) {
    const runner::SlurmJob job = runner::read_job(dir.empty() ? latest_job_folder() : std::filesystem::path(dir));
    const Plan plan = task_plan(job.plan_file.string(), job.sets);
    const auto cells = expand_matrix(plan, models::is_decoder_model);
    const auto split = runner::plan_shards(cells, job.shards);
    std::vector<ShardProgress> shards;
    for (std::int64_t k = 1; k <= job.shards; ++k)
        shards.push_back(shard_progress(job, split[static_cast<std::size_t>(k - 1)], plan.settings.repeats, k));
    std::string problem;
    const auto tasks = job.job_id.empty() ? std::map<std::int64_t, runner::TaskState>{}
                                          : runner::array_task_states(job.job_id, problem);
    print_table(status_table(job, shards, tasks), output);
    std::int64_t benchmarks = 0, ok = 0, failed = 0, pending = 0;
    for (const auto& p : shards) {
        benchmarks += p.benchmarks;
        ok += p.ok;
        failed += p.failed;
        pending += p.pending();
    }
    if (!output.quiet)
        fmt::print(stderr, "job {}: {} of {} benchmarks ok, {} failed, {} pending{}\n", job.job_id, ok, benchmarks,
                   failed, pending, problem.empty() ? "" : fmt::format("; Slurm could not be asked: {}", problem));
    return kExitOk;
}

}  // namespace

void add_slurm_command(CLI::App& app, CommandContext& context) {
    CLI::App* slurm = app.add_subcommand("slurm", "run a plan on a Slurm cluster: one array task per shard");
    slurm->require_subcommand(1);

    auto args = std::make_shared<SubmitArgs>();
    CLI::App* submit_cmd = slurm->add_subcommand(
        "submit",
        "write a job folder (plan copy, batch script, manifest) and submit it with sbatch; prints the job id");
    submit_cmd->add_option("plan", args->plan_file, "plan file (YAML)")->required()->check(CLI::ExistingFile);
    submit_cmd->add_option("--set", args->sets, "set any plan key, KEY=VALUE (repeatable), for every task")
        ->allow_extra_args(false);
    submit_cmd->add_option("--partition", args->partition, "sbatch --partition");
    submit_cmd->add_option("--gres", args->gres, "sbatch --gres, e.g. gpu:1 (each task's GPUs)");
    submit_cmd->add_option("--time", args->time, "sbatch --time, each task's limit, e.g. 2:00:00");
    submit_cmd->add_option("--max-parallel", args->max_parallel, "tasks running at once (the array's %K); 0: no limit");
    submit_cmd
        ->add_option("--shards", args->shards, "tasks (shards of the plan); default: one per model and kind of device")
        ->check(CLI::Range(std::int64_t{1}, kMaxShards));
    submit_cmd->add_option("--db", args->db,
                           "a folder for the shards' SQLite files (shard-K.db; default: the job folder's shards/), or "
                           "a shared store's URL every task writes");
    submit_cmd->add_option("--dir", args->dir, "the job folder; default: inferbench-slurm/PLAN-DATE-TIME");
    submit_cmd->add_flag("--dry-run", args->dry_run, "print the batch script; write and submit nothing");
    submit_cmd->callback([&context, args] { context.action = [args] { return submit(*args); }; });

    auto dir = std::make_shared<std::string>();
    auto output = std::make_shared<OutputOptions>();
    CLI::App* status_cmd = slurm->add_subcommand(
        "status", "each shard's benchmarks (ok, failed, pending) from its store and its task's state in Slurm");
    status_cmd->add_option("job", *dir, "the job folder submit printed; default: the newest in ./inferbench-slurm");
    output->add_to(*status_cmd);
    status_cmd->callback([&context, dir, output] { context.action = [dir, output] { return status(*dir, *output); }; });
}

}  // namespace inferbench::cli
