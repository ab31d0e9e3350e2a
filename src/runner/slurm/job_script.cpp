#include "runner/slurm/job_script.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"

namespace inferbench::runner {
namespace {

constexpr const char* kManifest = "manifest.json";

}  // namespace

std::string SlurmJob::store_of(std::int64_t shard) const {
    if (!db.empty()) return db;
    return (shard_folder / fmt::format("shard-{}.db", shard)).string();
}

std::filesystem::path SlurmJob::log_of(std::int64_t shard) const {
    return folder / "logs" / fmt::format("task-{}.out", shard);
}

std::string shell_quote(std::string_view text) {
    std::string quoted = "'";
    for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

std::string sbatch_script(const SlurmJob& job) {
    std::string script = "#!/bin/bash\n";
    script += fmt::format("#SBATCH --job-name={}\n", shell_quote("inferbench-" + job.plan_file.stem().string()));
    script += fmt::format("#SBATCH --array=1-{}{}\n", job.shards,
                          job.max_parallel > 0 ? fmt::format("%{}", job.max_parallel) : "");
    script += "#SBATCH --requeue\n#SBATCH --open-mode=append\n";
    script += fmt::format("#SBATCH --output={}\n", shell_quote((job.folder / "logs" / "task-%a.out").string()));
    script += fmt::format("#SBATCH --signal=B:TERM@{}\n", kTermGraceSeconds);
    if (!job.partition.empty()) script += fmt::format("#SBATCH --partition={}\n", shell_quote(job.partition));
    if (!job.gres.empty()) script += fmt::format("#SBATCH --gres={}\n", shell_quote(job.gres));
    if (!job.time.empty()) script += fmt::format("#SBATCH --time={}\n", shell_quote(job.time));
    script += fmt::format(
        "# Written by `inferbench slurm submit`: array task K runs shard K of {} of the plan. Started again (a "
        "requeue,\n"
        "# a preemption), the same command goes on with the shard's unfinished run (--continue), measuring only what\n"
        "# has no ok result; SIGTERM (scancel, the time limit's warning) stores the cell being measured as "
        "interrupted.\n",
        job.shards);
    script += fmt::format(
        "echo \"inferbench shard ${{SLURM_ARRAY_TASK_ID}}/{}: job ${{SLURM_JOB_ID}}, start "
        "$((${{SLURM_RESTART_COUNT:-0}} + 1)) on $(hostname)\"\n",
        job.shards);
    const std::string db = job.db.empty()
                               ? shell_quote((job.shard_folder / "shard-").string()) + "\"${SLURM_ARRAY_TASK_ID}\"'.db'"
                               : shell_quote(job.db);
    script += fmt::format("exec {} run {} --shard \"${{SLURM_ARRAY_TASK_ID}}/{}\" --db {} --continue --quiet",
                          shell_quote(job.executable.string()), shell_quote(job.plan_file.string()), job.shards, db);
    for (const auto& set : job.sets) script += " --set " + shell_quote(set);
    return script + "\n";
}

nlohmann::ordered_json to_json(const SlurmJob& job) {
    nlohmann::ordered_json json;
    json["plan_file"] = job.plan_file.string();
    json["plan_source"] = job.plan_source;
    json["sets"] = job.sets;
    json["shards"] = job.shards;
    json["max_parallel"] = job.max_parallel;
    json["db"] = job.db;
    json["shard_folder"] = job.shard_folder.string();
    json["stores"] = nlohmann::ordered_json::array();
    for (std::int64_t k = 1; k <= job.shards; ++k) json["stores"].push_back(job.store_of(k));
    json["partition"] = job.partition;
    json["gres"] = job.gres;
    json["time"] = job.time;
    json["executable"] = job.executable.string();
    json["job_id"] = job.job_id;
    json["submitted_unix_ms"] = job.submitted_unix_ms;
    return json;
}

SlurmJob read_job(const std::filesystem::path& folder) {
    const auto path = folder / kManifest;
    std::string text;
    try {
        text = read_regular_file(path);
    } catch (const std::exception&) {
        throw UserError(
            fmt::format("{}: no job folder of `inferbench slurm submit` (it has no readable {}); give the "
                        "folder submit printed",
                        folder.string(), kManifest));
    }
    const auto json = nlohmann::json::parse(text, nullptr, false);
    try {
        SlurmJob job;
        job.folder = std::filesystem::absolute(folder);
        job.plan_file = json.at("plan_file").get<std::string>();
        job.plan_source = json.at("plan_source").get<std::string>();
        job.sets = json.at("sets").get<std::vector<std::string>>();
        job.shards = json.at("shards").get<std::int64_t>();
        job.max_parallel = json.at("max_parallel").get<std::int64_t>();
        job.db = json.at("db").get<std::string>();
        job.shard_folder = json.at("shard_folder").get<std::string>();
        job.partition = json.at("partition").get<std::string>();
        job.gres = json.at("gres").get<std::string>();
        job.time = json.at("time").get<std::string>();
        job.executable = json.at("executable").get<std::string>();
        job.job_id = json.at("job_id").get<std::string>();
        job.submitted_unix_ms = json.at("submitted_unix_ms").get<std::int64_t>();
        if (job.shards < 1) throw std::out_of_range("shards below 1");
        return job;
    } catch (const std::exception& e) {
        throw UserError(fmt::format("{}: not a manifest `inferbench slurm submit` wrote ({}); submit the plan again",
                                    path.string(), e.what()));
    }
}

}  // namespace inferbench::runner
