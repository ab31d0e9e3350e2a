// The job folder and batch script of `inferbench slurm submit`: one Slurm array task per shard of a plan
// (core/plan/shard), each running `inferbench run PLAN --shard K/N --continue` into its own SQLite file in the
// folder (or another folder given) or into the shared store given by its URL. The script asks Slurm to requeue
// the task when it is preempted or its node fails (--requeue), to append to its output rather than truncate it
// when it starts again (--open-mode=append), and to send SIGTERM to the task GRACE seconds before its time limit
// (--signal=B:TERM@GRACE); the task execs inferbench, which stores the cell it was measuring as interrupted and
// closes the run. Started again, the same command line goes on with the shard's unfinished run (`run
// --continue`): finished benchmarks are not measured again.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace inferbench::runner {

// Seconds between the SIGTERM Slurm sends before a task's time limit and the end: enough to store the cell
// being measured and close the run.
inline constexpr std::int64_t kTermGraceSeconds = 120;

// What `slurm submit` keeps in the job folder's manifest.json, and `slurm status` reads back.
struct SlurmJob {
    std::filesystem::path folder;     // absolute
    std::filesystem::path plan_file;  // the plan's copy in the folder, which every task runs
    std::string plan_source;          // the plan file as given
    std::vector<std::string> sets;    // --set KEY=VALUE, passed to every task
    std::int64_t shards = 1;
    std::int64_t max_parallel = 0;       // tasks at once; 0: as many as Slurm allows
    std::string db;                      // a shared store's URL every task writes; empty: a SQLite file per shard
    std::filesystem::path shard_folder;  // where shard K's file shard-K.db goes (absolute; the folder's shards/)
    std::string partition, gres, time;   // sbatch's, where given
    std::filesystem::path executable;    // the inferbench every task runs
    std::string job_id;                  // sbatch's answer; empty until submitted
    std::int64_t submitted_unix_ms = 0;

    // Where shard K's results go: its own file in the folder, or the shared store.
    std::string store_of(std::int64_t shard) const;
    std::filesystem::path script_path() const { return folder / "job.sbatch"; }
    std::filesystem::path log_of(std::int64_t shard) const;
};

// sh's single-quoted form of `text` ('it'\''s').
std::string shell_quote(std::string_view text);

// The batch script of the job's array.
std::string sbatch_script(const SlurmJob& job);

nlohmann::ordered_json to_json(const SlurmJob& job);
// The job of a folder `slurm submit` made; throws UserError naming the folder where it has no readable manifest.
SlurmJob read_job(const std::filesystem::path& folder);

}  // namespace inferbench::runner
