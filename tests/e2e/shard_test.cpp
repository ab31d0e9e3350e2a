// `run --shard K/N`: a shard's cells only, recorded with the run; `run --continue`: the same command line goes on
// with the shard's unfinished run (a Slurm task started again), also when Slurm ended its orchestrator on another
// host, and measures nothing twice.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <sstream>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e/background_cli.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using testing::BackgroundCli;
using ::testing::HasSubstr;
using testing::tagged_workers;
using testing::unique_tag;
using testing::wait_until;
using ScratchDir = testing::CliScratch;
using namespace std::chrono_literals;

// Six cells of one model, alike in time: three shards of two cells in plan order.
constexpr const char* kSixCells =
    "models: [null]\nbackends: [null]\nbatch_sizes: [1, 2, 3, 4, 5, 6]\nduration: 10ms\n"
    "warmup: 0s\ntelemetry_enabled: false\n";

// The ordinals (from 1) a --dry-run lists.
std::set<int> listed(const std::string& out) {
    std::set<int> ordinals;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);)
        if (!line.empty()) ordinals.insert(std::stoi(line));
    return ordinals;
}

TEST(Shard, DryRunListsEachShardsCellsAndTheShardsCoverThePlanOnce) {
    ScratchDir dir;
    dir.write("plan.yaml", kSixCells);
    std::set<int> all;
    for (int k = 1; k <= 3; ++k) {
        const auto result = dir.run("run plan.yaml --dry-run --shard " + std::to_string(k) + "/3");
        ASSERT_EQ(result.exit_code, 0) << result.err;
        const auto mine = listed(result.out);
        EXPECT_EQ(mine, (std::set<int>{2 * k - 1, 2 * k})) << result.out;
        EXPECT_THAT(result.err, HasSubstr("2 benchmarks (shard " + std::to_string(k) + "/3: 2 of the plan's 6 cells)"));
        all.insert(mine.begin(), mine.end());
    }
    EXPECT_EQ(all.size(), 6u);
    // The plan key and --set say the same.
    dir.write("keyed.yaml", std::string(kSixCells) + "shard: 2/3\n");
    EXPECT_EQ(listed(dir.run("run keyed.yaml --dry-run").out), (std::set<int>{3, 4}));
    EXPECT_EQ(listed(dir.run("run plan.yaml --dry-run --set shard=3/3").out), (std::set<int>{5, 6}));
}

TEST(Shard, AShardOutOfRangeOrMalformedIsOneLineAndExitTwo) {
    ScratchDir dir;
    dir.write("plan.yaml", kSixCells);
    for (const auto& [flag, says] : std::vector<std::pair<std::string, std::string>>{
             {"5/4", "shard '5/4': K goes from 1 to N (4)"},
             {"two", "shard 'two' is not K/N"},
             {"7/7", "shard 7/7 holds no benchmark: the plan has 6 cell(s), so split it into at most 6 shard(s)"}}) {
        const auto result = dir.run("run plan.yaml --db r.db --shard " + flag);
        EXPECT_EQ(result.exit_code, 2) << flag;
        EXPECT_THAT(result.err, HasSubstr(says)) << flag;
        EXPECT_EQ(std::count(result.err.begin(), result.err.end(), '\n'), 1) << result.err;
    }
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db"))) << "a refused shard stores nothing";
}

TEST(Shard, ARunStoresItsShardAndOnlyItsCells) {
    ScratchDir dir;
    dir.write("plan.yaml", kSixCells);
    const auto result = dir.run("run plan.yaml --db r.db --quiet --shard 2/3");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto run = store.runs().at(0);
    ASSERT_TRUE(run.shard);
    EXPECT_EQ(*run.shard, (store::Shard{2, 3}));
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].ordinal, 2);  // the plan's ordinals: shards merge into one plan
    EXPECT_EQ(benchmarks[1].ordinal, 3);
}

// Shard 1/2 of four cells, each measured for 1.5 s at 1 ms an inference: SIGTERM while its second cell measures.
struct InterruptedShard {
    ScratchDir dir;
    std::vector<std::string> command = {"run", "plan.yaml", "--db", "r.db", "--quiet", "--shard", "1/2", "--continue"};

    InterruptedShard() {
        dir.write("plan.yaml",
                  "models: [null]\nbackends: [fault]\nbatch_sizes: [1, 2, 3, 4]\nduration: 1500ms\n"
                  "warmup: 0s\ntelemetry_enabled: false\nbackend_options:\n  fault: {sleep_ms: 1}\n");
        const std::string tag = unique_tag();
        BackgroundCli cli(dir, command, tag);
        EXPECT_TRUE(wait_until([&] { return ok_count() == 1; }, 30s)) << "the first cell did not finish";
        EXPECT_TRUE(wait_until([&] { return !tagged_workers(tag).empty(); }, 20s)) << "the second cell did not start";
        std::this_thread::sleep_for(300ms);
        cli.signal(SIGTERM);
        const int status = cli.wait();
        EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 128 + SIGTERM) << cli.err();
    }

    std::string command_line() const {
        std::string line;
        for (const auto& arg : command) line += (line.empty() ? "" : " ") + arg;
        return line;
    }

    std::int64_t ok_count() const {
        if (!std::filesystem::exists(dir.file("r.db"))) return 0;
        try {
            const auto db = store::Database::open(dir.file("r.db"), SQLITE_OPEN_READONLY);
            store::Statement count = db.prepare("SELECT count(*) FROM benchmarks WHERE status = 'ok'");
            return count.step() ? count.column_int64(0) : 0;
        } catch (const std::exception&) {
            return 0;
        }
    }
};

TEST(Shard, ContinueGoesOnWithTheShardsRunAndMeasuresNothingTwice) {
    InterruptedShard shard;
    const auto before = store::ResultsStore::open(shard.dir.file("r.db")).benchmarks();
    ASSERT_EQ(before.size(), 2u);
    ASSERT_EQ(before[0].status, BenchmarkStatus::ok);
    ASSERT_EQ(before[1].status, BenchmarkStatus::interrupted);

    const auto again = shard.dir.run(shard.command_line());
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_THAT(again.err, HasSubstr("resuming run 1 (shard 1/2): 1 of 2 benchmarks have no ok result"));
    const auto store = store::ResultsStore::open(shard.dir.file("r.db"));
    ASSERT_EQ(store.runs().size(), 1u) << "the same run goes on";
    EXPECT_EQ(store.runs()[0].status, RunStatus::completed);
    const auto after = store.benchmarks();
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[0].benchmark_id, before[0].benchmark_id) << "the finished cell is kept as it was";
    EXPECT_EQ(after[0].started_unix_ms, before[0].started_unix_ms);
    EXPECT_EQ(after[1].ordinal, 1);
    EXPECT_EQ(after[1].status, BenchmarkStatus::ok);

    const auto third = shard.dir.run(shard.command_line());
    EXPECT_EQ(third.exit_code, 0) << third.err;
    EXPECT_THAT(third.err, HasSubstr("run 1 in r.db completed this plan (shard 1/2); nothing to run (--continue)"));
    EXPECT_EQ(store::ResultsStore::open(shard.dir.file("r.db")).benchmarks().size(), 2u);
}

TEST(Shard, ContinueTakesOverARunSlurmEndedOnAnotherHost) {
    InterruptedShard shard;
    {
        // As a run looks whose task Slurm killed on node-gone (no SIGTERM handled, so still 'running') at its
        // first start.
        auto db = store::Database::open(shard.dir.file("r.db"), SQLITE_OPEN_READWRITE);
        db.exec(
            "UPDATE runs SET status = 'running', ended_unix_ms = NULL, end_reason = NULL, host = 'node-gone', "
            "environment_json = json_set(environment_json, '$.slurm', "
            "json('{\"job_id\": \"77\", \"restart_count\": 0, \"node\": \"node-gone\"}'))");
    }
    const auto refused = shard.dir.run(shard.command_line());
    EXPECT_EQ(refused.exit_code, 2) << "outside that job nobody can tell whether node-gone still writes it";
    EXPECT_THAT(refused.err, HasSubstr("still being written"));

    const auto resumed = shard.dir.run(shard.command_line(), "env SLURM_JOB_ID=77 SLURM_RESTART_COUNT=1");
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_THAT(resumed.err, HasSubstr("resuming run 1 (shard 1/2)"));
    const auto store = store::ResultsStore::open(shard.dir.file("r.db"));
    EXPECT_EQ(store.runs().at(0).status, RunStatus::completed);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok);
    EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::ok);
}

TEST(Shard, SlurmSubmitDryRunPrintsTheScriptAndWritesNothing) {
    ScratchDir dir;
    dir.write("plan.yaml", kSixCells);
    const auto result = dir.run(
        "slurm submit plan.yaml --dry-run --shards 3 --max-parallel 2 --gres gpu:1 --dir job "
        "--db results --set duration=20ms");
    ASSERT_EQ(result.exit_code, 0) << result.err;
    const std::string job = (dir.path() / "job").string();
    EXPECT_THAT(result.out, HasSubstr("#SBATCH --array=1-3%2\n"));
    EXPECT_THAT(result.out, HasSubstr("#SBATCH --gres='gpu:1'\n"));
    EXPECT_THAT(result.out, HasSubstr("run '" + job + "/plan.yaml' --shard \"${SLURM_ARRAY_TASK_ID}/3\" --db '" +
                                      dir.path().string() +
                                      "/results/shard-'\"${SLURM_ARRAY_TASK_ID}\"'.db' --continue "
                                      "--quiet --set 'duration=20ms'"));
    EXPECT_THAT(result.err, HasSubstr("3 tasks (shards) of the plan's 6 cells would be submitted"));
    EXPECT_FALSE(std::filesystem::exists(job));
    EXPECT_FALSE(std::filesystem::exists(dir.file("results")));
    // More shards than cells, or a plan that sets its own shard, is refused before anything is written.
    const auto too_many = dir.run("slurm submit plan.yaml --dry-run --shards 7");
    EXPECT_EQ(too_many.exit_code, 2);
    EXPECT_THAT(too_many.err, HasSubstr("--shards 7: the plan has 6 cell(s), so give at most 6 shards"));
    const auto own_shard = dir.run("slurm submit plan.yaml --dry-run --set shard=1/2");
    EXPECT_EQ(own_shard.exit_code, 2);
    EXPECT_THAT(own_shard.err, HasSubstr("the plan sets shard 1/2; `slurm submit` splits the plan itself"));
}

}  // namespace
}  // namespace inferbench
