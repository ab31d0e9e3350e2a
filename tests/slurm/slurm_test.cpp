// `inferbench slurm submit` and `slurm status` against a real Slurm (tests/common/slurm_cluster): a 4-task array
// of CPU cells, one task killed mid-cell with `scancel --full --signal=TERM` and requeued; every cell arrives
// exactly once and nothing that had finished is measured again.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/slurm_cluster.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Eight cells of one model, 1 ms an inference for 1 s each: four shards of two cells, in plan order.
constexpr const char* kPlan =
    "models: [null]\nbackends: [fault]\nbatch_sizes: [1, 2, 3, 4, 5, 6, 7, 8]\n"
    "duration: 1s\nwarmup: 0s\ntelemetry_enabled: false\nbackend_options:\n"
    "  fault: {sleep_ms: 1}\n";

class SlurmTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!testing::SlurmCluster::available())
            GTEST_SKIP() << "slurm-wlm and munge are not installed (scripts/setup.sh --tests installs them)";
        cluster_.emplace();
        dir_.write("plan.yaml", kPlan);
    }

    // inferbench with the cluster's SLURM_CONF.
    testing::CliResult inferbench(const std::string& args) const { return dir_.run(args, "env " + cluster_->env()); }

    std::string job_folder() const { return dir_.file("job"); }
    std::string shard_file(int k) const { return job_folder() + "/shards/shard-" + std::to_string(k) + ".db"; }

    std::int64_t ok_in(int k) const {
        if (!std::filesystem::exists(shard_file(k))) return 0;
        try {
            const auto db = store::Database::open(shard_file(k), SQLITE_OPEN_READONLY);
            store::Statement count = db.prepare("SELECT count(*) FROM benchmarks WHERE status = 'ok'");
            return count.step() ? count.column_int64(0) : 0;
        } catch (const std::exception&) {
            return 0;
        }
    }

    // Array task K's state as scontrol tells it ("" where it has none).
    std::string task_state(const std::string& job, int k) const {
        const auto out = cluster_->command({"scontrol", "-o", "show", "job", job + "_" + std::to_string(k)}).out;
        const auto at = out.find("JobState=");
        return at == std::string::npos ? "" : out.substr(at + 9, out.find(' ', at) - at - 9);
    }

    template <typename Done>
    static bool wait_for(Done done, std::chrono::seconds limit) {
        const auto deadline = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < deadline) {
            if (done()) return true;
            std::this_thread::sleep_for(200ms);
        }
        return done();
    }

    testing::CliScratch dir_;
    std::optional<testing::SlurmCluster> cluster_;
};

TEST_F(SlurmTest, ARequeuedTaskResumesItsShardAndEveryCellArrivesOnce) {
    const auto started = std::chrono::steady_clock::now();
    const auto submitted = inferbench("slurm submit plan.yaml --shards 4 --max-parallel 4 --dir job");
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err << cluster_->logs();
    const std::string job = std::string(submitted.out.substr(0, submitted.out.find('\n')));
    ASSERT_FALSE(job.empty());

    // Task 2 is stopped while it measures its second cell, then requeued.
    ASSERT_TRUE(wait_for([&] { return ok_in(2) == 1; }, 90s)) << "shard 2's first cell did not finish\n"
                                                              << cluster_->logs();
    std::this_thread::sleep_for(400ms);
    const auto term = cluster_->command({"scancel", "--full", "--signal=TERM", job + "_2"});
    ASSERT_TRUE(term.status.success()) << term.err;
    // Ended, not COMPLETING: its inferbench has stored the cell it stopped and exited.
    ASSERT_TRUE(wait_for(
        [&] {
            const std::string state = task_state(job, 2);
            return state == "FAILED" || state == "CANCELLED" || state == "COMPLETED";
        },
        30s))
        << "task 2 did not stop: " << task_state(job, 2);
    const auto before = store::ResultsStore::open(shard_file(2), store::ResultsStore::Access::read).benchmarks();
    ASSERT_EQ(before.size(), 2u);
    EXPECT_EQ(before[0].status, BenchmarkStatus::ok);
    // interrupted, or failed where the worker's own SIGTERM (scancel --full signals every process) was seen first
    EXPECT_NE(before[1].status, BenchmarkStatus::ok) << before[1].reason;
    const auto requeue = cluster_->command({"scontrol", "requeue", job + "_2"});
    ASSERT_TRUE(requeue.status.success()) << requeue.err;

    ASSERT_TRUE(wait_for(
        [&] {
            for (int k = 1; k <= 4; ++k)
                if (task_state(job, k) != "COMPLETED") return false;
            return true;
        },
        180s))
        << inferbench("slurm status job").out << cluster_->logs();
    std::cerr << "[ slurm    ] the array, with the requeue, ended after "
              << std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - started).count()
              << " s\n";

    // Every shard one completed run of its own cells; together every cell of the plan once.
    std::map<std::int64_t, int> arrived;
    for (int k = 1; k <= 4; ++k) {
        const auto store = store::ResultsStore::open(shard_file(k), store::ResultsStore::Access::read);
        const auto runs = store.runs();
        ASSERT_EQ(runs.size(), 1u) << "shard " << k << ": a requeued task goes on with its run";
        EXPECT_EQ(runs[0].status, RunStatus::completed);
        ASSERT_TRUE(runs[0].shard);
        EXPECT_EQ(*runs[0].shard, (store::Shard{k, 4}));
        for (const auto& benchmark : store.benchmarks()) {
            EXPECT_EQ(benchmark.status, BenchmarkStatus::ok) << benchmark.reason;
            ++arrived[benchmark.ordinal];
        }
    }
    ASSERT_EQ(arrived.size(), 8u);
    for (const auto& [ordinal, times] : arrived) EXPECT_EQ(times, 1) << "cell " << ordinal + 1;

    // The cell that had finished before the kill is the same record; only the interrupted one ran again.
    const auto after = store::ResultsStore::open(shard_file(2), store::ResultsStore::Access::read).benchmarks();
    ASSERT_EQ(after.size(), 2u);
    EXPECT_EQ(after[0].benchmark_id, before[0].benchmark_id);
    EXPECT_EQ(after[0].started_unix_ms, before[0].started_unix_ms);
    EXPECT_GT(after[1].started_unix_ms, before[1].started_unix_ms);
    const std::string log = testing::read_file(job_folder() + "/logs/task-2.out");
    EXPECT_THAT(log, HasSubstr("inferbench shard 2/4: job")) << log;
    EXPECT_THAT(log, HasSubstr("start 2 on")) << "the output is appended to across the requeue:\n" << log;
    EXPECT_THAT(log, HasSubstr("resuming run 1 (shard 2/4): 1 of 2 benchmarks have no ok result")) << log;

    const auto status = inferbench("slurm status job --format csv");
    ASSERT_EQ(status.exit_code, 0) << status.err;
    EXPECT_THAT(status.out, HasSubstr("2/4,2,2,0,0,0,1,completed,COMPLETED,1,")) << status.out;
    EXPECT_THAT(status.err, HasSubstr("8 of 8 benchmarks ok, 0 failed, 0 pending")) << status.err;

    // The shards merged into one store: every cell exactly once.
    std::string args = "merge";
    for (int k = 1; k <= 4; ++k) args += " " + shard_file(k);
    const auto merged = inferbench(args + " --into all.db");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    const auto all = store::ResultsStore::open(dir_.file("all.db"), store::ResultsStore::Access::read);
    std::set<std::int64_t> ordinals;
    for (const auto& benchmark : all.benchmarks()) EXPECT_TRUE(ordinals.insert(benchmark.ordinal).second);
    EXPECT_EQ(ordinals.size(), 8u);
}

TEST_F(SlurmTest, ARefusedSubmissionIsSbatchsReasonOnOneLineAndLeavesNothing) {
    for (const auto& [flags, says] : std::vector<std::pair<std::string, std::string>>{
             {"--partition nosuch", "Slurm refused the job: "}, {"--gres gpu:9", "Slurm refused the job: "}}) {
        const auto refused = inferbench("slurm submit plan.yaml --dir job " + flags);
        EXPECT_EQ(refused.exit_code, 2) << flags;
        EXPECT_THAT(refused.err, HasSubstr(says)) << flags;
        EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
        EXPECT_FALSE(std::filesystem::exists(job_folder())) << "a refused job leaves no folder";
    }
    EXPECT_TRUE(cluster_->command({"squeue", "-h"}).out.empty());
}

TEST_F(SlurmTest, TasksAskingForGresRunTheirShardsAndRecordTheirTask) {
    const auto submitted = inferbench("slurm submit plan.yaml --shards 2 --gres gpu:1 --dir job");
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    const std::string job = std::string(submitted.out.substr(0, submitted.out.find('\n')));
    ASSERT_TRUE(wait_for([&] { return task_state(job, 1) == "COMPLETED" && task_state(job, 2) == "COMPLETED"; }, 120s))
        << cluster_->logs();
    for (int k = 1; k <= 2; ++k) {
        const auto store = store::ResultsStore::open(shard_file(k), store::ResultsStore::Access::read);
        const auto environment = store.runs().at(0).environment_json;
        EXPECT_THAT(environment, HasSubstr("\"array_task_id\":\"" + std::to_string(k) + "\"")) << environment;
        EXPECT_EQ(store.benchmarks().size(), 4u);
    }
}

// What a failing test leaves behind is what the destructor cleans: a job still running, the daemons up.
TEST(SlurmCluster, ItsEndCancelsRunningJobsStopsTheDaemonsAndRemovesItsFolder) {
    if (!testing::SlurmCluster::available()) GTEST_SKIP() << "slurm-wlm and munge are not installed";
    std::filesystem::path folder;
    std::string marker;
    {
        testing::SlurmCluster cluster;
        folder = cluster.dir();
        marker = cluster.env();
        const auto job = cluster.command(
            {"sbatch", "--parsable", "--output", (folder / "sleep.out").string(), "--wrap", "sleep 300"});
        ASSERT_TRUE(job.status.success()) << job.err;
        const auto deadline = std::chrono::steady_clock::now() + 30s;
        while (cluster.command({"squeue", "-h", "-t", "RUNNING"}).out.empty() &&
               std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(200ms);
        ASSERT_FALSE(cluster.command({"squeue", "-h", "-t", "RUNNING"}).out.empty()) << cluster.logs();
    }
    EXPECT_FALSE(std::filesystem::exists(folder));
    // No process is left with the cluster's SLURM_CONF: not the daemons' children, not the job's sleep.
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        std::ifstream environ(entry.path() / "environ", std::ios::binary);
        for (std::string variable; std::getline(environ, variable, '\0');)
            EXPECT_NE(variable, marker) << "process " << entry.path().filename() << " outlived the cluster";
    }
}

}  // namespace
}  // namespace inferbench
