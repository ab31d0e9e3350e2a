// The Slurm job a process runs in, from the variables Slurm sets for a batch job (SLURM_JOB_ID, ...), stored with
// a run's environment. Slurm runs a job in one place at a time and ends every process of it before it starts the
// job again (a requeue, a preemption), counting the starts in SLURM_RESTART_COUNT: a run written by an earlier
// start of the job this process belongs to has lost its orchestrator, on whichever host it ran.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace inferbench {

struct SlurmTask {
    std::string job_id;              // SLURM_JOB_ID: an array task's own id, kept across requeues
    std::string array_job_id;        // SLURM_ARRAY_JOB_ID; empty outside an array
    std::string array_task_id;       // SLURM_ARRAY_TASK_ID
    std::int64_t restart_count = 0;  // SLURM_RESTART_COUNT; 0 where unset (the first start)
    std::string node;                // SLURMD_NODENAME
};

// The job of this process (or of `getenv`'s variables), or nothing outside Slurm.
using EnvironmentLookup = std::function<const char*(const char*)>;
std::optional<SlurmTask> current_slurm_task(const EnvironmentLookup& environment = {});

// As stored under "slurm" in a run's environment JSON, and read back from it (nothing where absent or unreadable).
nlohmann::ordered_json to_json(const SlurmTask& task);
std::optional<SlurmTask> slurm_task_of(std::string_view environment_json);

// Whether `earlier` is a start of `now`'s job before `now` (so Slurm ended it before `now` began).
bool is_earlier_start(const SlurmTask& earlier, const SlurmTask& now);

}  // namespace inferbench
