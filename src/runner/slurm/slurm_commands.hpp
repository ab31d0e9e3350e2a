// The Slurm commands inferbench runs (sbatch, scontrol), each with the environment it was started in (SLURM_CONF
// included), and what their output means. No accounting is assumed: a task's state comes from `scontrol show
// job`, which keeps a finished job for the cluster's MinJobAge (300 s by default); sacct needs slurmdbd.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

namespace inferbench::runner {

// Submits a batch script with `sbatch --parsable`; returns the job id. A refused submission (no such partition,
// no such GRES, ...) throws UserError with sbatch's own reasons on one line; sbatch missing or not answering
// throws EnvironmentError.
std::string submit_batch_script(const std::filesystem::path& script);

// sbatch's stderr as one line: its "sbatch: error: " prefixes dropped, lines joined with "; ".
std::string one_line(std::string_view sbatch_stderr);

// One array task as `scontrol show job` tells it.
struct TaskState {
    std::string state;   // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
    std::string reason;  // why it waits ("None" where it does not)
    std::int64_t restarts = 0;
    std::string node;  // where it runs or ran; empty while pending
};

// `scontrol -o show job ARRAY_JOB_ID` (one record per line) by array task id: a pending record for several tasks
// ("ArrayTaskId=2-4%1", "1,3-5") gives each of them its state.
std::map<std::int64_t, TaskState> parse_array_tasks(std::string_view scontrol_output);

// The array's tasks as Slurm knows them now; empty where Slurm no longer knows the job (or cannot be asked: then
// `problem` says why).
std::map<std::int64_t, TaskState> array_task_states(const std::string& job_id, std::string& problem);

}  // namespace inferbench::runner
