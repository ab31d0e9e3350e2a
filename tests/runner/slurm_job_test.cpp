// The batch script and manifest of `slurm submit`, and what inferbench reads from sbatch and scontrol.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "common/user_error.hpp"
#include "runner/slurm/job_script.hpp"
#include "runner/slurm/slurm_commands.hpp"

namespace inferbench::runner {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

SlurmJob job_in(const std::filesystem::path& folder) {
    SlurmJob job;
    job.folder = folder;
    job.plan_file = folder / "plan.yaml";
    job.plan_source = "plans/gpus.yaml";
    job.sets = {"duration=2s", "name=it's"};
    job.shards = 6;
    job.max_parallel = 2;
    job.partition = "gpu";
    job.gres = "gpu:1";
    job.time = "1:00:00";
    job.executable = "/opt/inferbench/bin/inferbench";
    job.shard_folder = folder / "shards";
    return job;
}

TEST(SlurmJob, TheScriptIsAnArrayTaskPerShardThatResumesItsShard) {
    const std::string script = sbatch_script(job_in("/shared/job"));
    EXPECT_THAT(script, HasSubstr("#SBATCH --array=1-6%2\n"));
    EXPECT_THAT(script, HasSubstr("#SBATCH --requeue\n#SBATCH --open-mode=append\n"));
    EXPECT_THAT(script, HasSubstr("#SBATCH --output='/shared/job/logs/task-%a.out'\n"));
    EXPECT_THAT(script, HasSubstr("#SBATCH --signal=B:TERM@120\n"));
    EXPECT_THAT(script, HasSubstr("#SBATCH --partition='gpu'\n#SBATCH --gres='gpu:1'\n#SBATCH --time='1:00:00'\n"));
    EXPECT_THAT(
        script,
        HasSubstr("exec '/opt/inferbench/bin/inferbench' run '/shared/job/plan.yaml' --shard "
                  "\"${SLURM_ARRAY_TASK_ID}/6\" --db '/shared/job/shards/shard-'\"${SLURM_ARRAY_TASK_ID}\"'.db' "
                  "--continue --quiet --set 'duration=2s' --set 'name=it'\\''s'\n"));
}

TEST(SlurmJob, ASharedStoreAndNoLimitsLeaveThoseLinesOut) {
    SlurmJob job = job_in("/shared/job");
    job.max_parallel = 0;
    job.partition = job.gres = job.time = "";
    job.db = "postgresql://bench@db/results";
    const std::string script = sbatch_script(job);
    EXPECT_THAT(script, HasSubstr("#SBATCH --array=1-6\n"));
    EXPECT_THAT(script, Not(HasSubstr("--partition")));
    EXPECT_THAT(script, Not(HasSubstr("--gres")));
    EXPECT_THAT(script, HasSubstr("--db 'postgresql://bench@db/results' --continue"));
    EXPECT_EQ(job.store_of(3), "postgresql://bench@db/results");
}

TEST(SlurmJob, TheManifestReadsBack) {
    testing::ScratchDir dir;
    SlurmJob job = job_in(dir.path());
    job.job_id = "4711";
    job.submitted_unix_ms = 1234;
    dir.write("manifest.json", to_json(job).dump(2));
    const SlurmJob back = read_job(dir.path());
    EXPECT_EQ(back.job_id, "4711");
    EXPECT_EQ(back.shards, 6);
    EXPECT_EQ(back.sets, job.sets);
    EXPECT_EQ(back.store_of(2), (dir.path() / "shards" / "shard-2.db").string());
    EXPECT_THAT(to_json(job).dump(), HasSubstr("\"stores\":[\"" + (dir.path() / "shards" / "shard-1.db").string()));
}

TEST(SlurmJob, AFolderWithoutAManifestIsOneLine) {
    testing::ScratchDir dir;
    EXPECT_THAT(testing::user_error([&] { read_job(dir.path()); }),
                HasSubstr("no job folder of `inferbench slurm submit` (it has no readable manifest.json)"));
    dir.write("manifest.json", "{\"shards\": 2}");
    EXPECT_THAT(testing::user_error([&] { read_job(dir.path()); }),
                HasSubstr("not a manifest `inferbench slurm submit` wrote"));
}

TEST(SlurmJob, ShellQuotingSurvivesQuotes) {
    EXPECT_EQ(shell_quote("plain"), "'plain'");
    EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
}

TEST(SlurmCommands, AnSbatchRefusalIsOneLine) {
    EXPECT_EQ(one_line("sbatch: error: invalid partition specified: nosuch\n"
                       "sbatch: error: Batch job submission failed: Invalid partition name specified\n"),
              "invalid partition specified: nosuch; Batch job submission failed: Invalid partition name specified");
}

TEST(SlurmCommands, ArrayTasksFromScontrol) {
    const auto tasks = parse_array_tasks(
        "JobId=3 ArrayJobId=3 ArrayTaskId=2-4%1 JobState=PENDING Reason=JobArrayTaskLimit Restarts=0 NodeList=(null)\n"
        "JobId=4 ArrayJobId=3 ArrayTaskId=1 JobState=RUNNING Reason=None Restarts=1 NodeList=node7\n");
    ASSERT_EQ(tasks.size(), 4u);
    EXPECT_EQ(tasks.at(1).state, "RUNNING");
    EXPECT_EQ(tasks.at(1).restarts, 1);
    EXPECT_EQ(tasks.at(1).node, "node7");
    EXPECT_EQ(tasks.at(3).state, "PENDING");
    EXPECT_EQ(tasks.at(3).reason, "JobArrayTaskLimit");
    EXPECT_EQ(tasks.at(4).node, "");
    EXPECT_EQ(parse_array_tasks("JobId=9 JobState=RUNNING\n").size(), 0u) << "not an array";
    EXPECT_EQ(parse_array_tasks("JobId=9 ArrayTaskId=1,5-6 JobState=COMPLETED\n").size(), 3u);
}

}  // namespace
}  // namespace inferbench::runner
