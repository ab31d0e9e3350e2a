#include "core/process/slurm_task.hpp"

#include <cstdlib>

#include "core/units.hpp"

namespace inferbench {

std::optional<SlurmTask> current_slurm_task(const EnvironmentLookup& environment) {
    const auto lookup = [&](const char* name) -> std::string {
        const char* value = environment ? environment(name) : std::getenv(name);
        return value ? value : "";
    };
    SlurmTask task;
    task.job_id = lookup("SLURM_JOB_ID");
    if (task.job_id.empty()) return std::nullopt;
    task.array_job_id = lookup("SLURM_ARRAY_JOB_ID");
    task.array_task_id = lookup("SLURM_ARRAY_TASK_ID");
    task.restart_count = parse_int(lookup("SLURM_RESTART_COUNT")).value_or(0);
    task.node = lookup("SLURMD_NODENAME");
    return task;
}

nlohmann::ordered_json to_json(const SlurmTask& task) {
    nlohmann::ordered_json json;
    json["job_id"] = task.job_id;
    if (!task.array_job_id.empty()) {
        json["array_job_id"] = task.array_job_id;
        json["array_task_id"] = task.array_task_id;
    }
    json["restart_count"] = task.restart_count;
    json["node"] = task.node;
    return json;
}

std::optional<SlurmTask> slurm_task_of(std::string_view environment_json) {
    const auto environment = nlohmann::json::parse(environment_json, nullptr, false);
    if (!environment.is_object() || !environment.contains("slurm")) return std::nullopt;
    const auto& slurm = environment["slurm"];
    if (!slurm.is_object() || !slurm.contains("job_id") || !slurm["job_id"].is_string()) return std::nullopt;
    try {
        SlurmTask task;
        task.job_id = slurm["job_id"].get<std::string>();
        task.array_job_id = slurm.value("array_job_id", "");
        task.array_task_id = slurm.value("array_task_id", "");
        task.restart_count = slurm.value("restart_count", std::int64_t{0});
        task.node = slurm.value("node", "");
        return task;
    } catch (const nlohmann::json::exception&) {
        return std::nullopt;  // a value of another type: not a record this reader can judge by
    }
}

bool is_earlier_start(const SlurmTask& earlier, const SlurmTask& now) {
    return !earlier.job_id.empty() && earlier.job_id == now.job_id && earlier.restart_count < now.restart_count;
}

}  // namespace inferbench
