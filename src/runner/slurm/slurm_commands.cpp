#include "runner/slurm/slurm_commands.hpp"

#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/process/subprocess.hpp"
#include "core/units.hpp"

namespace inferbench::runner {
namespace {

constexpr int kCommandTimeoutMs = 60'000;

// "KEY=value" of a one-line scontrol record (values hold no spaces in the keys read here).
std::string field_of(std::string_view record, std::string_view key) {
    const std::string wanted = std::string(key) + "=";
    std::size_t at = 0;
    while ((at = record.find(wanted, at)) != std::string_view::npos) {
        if (at == 0 || record[at - 1] == ' ') {
            const std::size_t begin = at + wanted.size();
            const std::size_t end = record.find(' ', begin);
            return std::string(record.substr(begin, end == std::string_view::npos ? end : end - begin));
        }
        at += wanted.size();
    }
    return {};
}

// "2-4%1" -> 2, 3, 4; "1,3-5" -> 1, 3, 4, 5; "[2-3]" alike.
std::vector<std::int64_t> task_ids(std::string ids) {
    if (const auto percent = ids.find('%'); percent != std::string::npos) ids.resize(percent);
    std::erase(ids, '[');
    std::erase(ids, ']');
    std::vector<std::int64_t> out;
    for (const auto& range : split_list(ids)) {
        const auto dash = range.find('-');
        const auto first = parse_int(range.substr(0, dash));
        const auto last = dash == std::string::npos ? first : parse_int(range.substr(dash + 1));
        if (!first || !last) continue;
        for (std::int64_t id = *first; id <= *last && id - *first < 100'000; ++id) out.push_back(id);
    }
    return out;
}

}  // namespace

std::string one_line(std::string_view sbatch_stderr) {
    std::vector<std::string> lines;
    std::istringstream in{std::string(sbatch_stderr)};
    for (std::string line; std::getline(in, line);) {
        for (const std::string_view prefix : {"sbatch: error: ", "sbatch: "})
            if (line.starts_with(prefix)) {
                line.erase(0, prefix.size());
                break;
            }
        if (!trim(line).empty()) lines.emplace_back(trim(line));
    }
    return join(lines, "; ");
}

std::string submit_batch_script(const std::filesystem::path& script) {
    if (!find_program("sbatch"))
        throw EnvironmentError(
            "sbatch is not on PATH: `inferbench slurm submit` runs on a host of a Slurm cluster "
            "(a login node); --dry-run prints the script without it");
    const CapturedRun run = run_captured({"sbatch", "--parsable", script.string()}, std::nullopt, kCommandTimeoutMs);
    if (run.timed_out)
        throw EnvironmentError(
            fmt::format("sbatch did not answer in {} s; is slurmctld up (scontrol ping)?", kCommandTimeoutMs / 1000));
    if (!run.status.success()) {
        const std::string why = one_line(run.err);
        throw UserError(fmt::format("Slurm refused the job: {}", why.empty() ? run.status.describe() : why));
    }
    // "12345" or "12345;cluster".
    std::string id = std::string(trim(run.out));
    if (const auto semicolon = id.find(';'); semicolon != std::string::npos) id.resize(semicolon);
    if (!parse_int(id)) throw EnvironmentError(fmt::format("sbatch answered '{}', not a job id", trim(run.out)));
    return id;
}

std::map<std::int64_t, TaskState> parse_array_tasks(std::string_view scontrol_output) {
    std::map<std::int64_t, TaskState> tasks;
    std::istringstream in{std::string(scontrol_output)};
    for (std::string record; std::getline(in, record);) {
        const std::string ids = field_of(record, "ArrayTaskId");
        if (ids.empty()) continue;
        TaskState state{field_of(record, "JobState"), field_of(record, "Reason"),
                        parse_int(field_of(record, "Restarts")).value_or(0), field_of(record, "NodeList")};
        if (state.node == "(null)") state.node.clear();
        for (const std::int64_t id : task_ids(ids)) tasks[id] = state;
    }
    return tasks;
}

std::map<std::int64_t, TaskState> array_task_states(const std::string& job_id, std::string& problem) {
    if (!find_program("scontrol")) {
        problem = "scontrol is not on PATH";
        return {};
    }
    const CapturedRun run = run_captured({"scontrol", "-o", "show", "job", job_id}, std::nullopt, kCommandTimeoutMs);
    if (run.timed_out) {
        problem = "scontrol did not answer";
        return {};
    }
    if (!run.status.success()) {
        // "Invalid job id specified": purged after MinJobAge; anything else is worth showing.
        const std::string why = std::string(trim(run.err));
        if (why.find("Invalid job id") == std::string::npos) problem = why.empty() ? run.status.describe() : why;
        return {};
    }
    return parse_array_tasks(run.out);
}

}  // namespace inferbench::runner
