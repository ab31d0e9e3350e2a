// Killing, stopping or hanging up on the orchestrator: its worker dies with it (or at its own deadline),
// the store stays sound, the run is not left `running`, and `run --resume` finishes the run with every
// cell measured exactly once.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>
#include <random>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e/background_cli.hpp"
#include "store/results_store.hpp"
#include "store/sqlite.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using testing::BackgroundCli;
using testing::tagged_workers;
using testing::unique_tag;
using testing::wait_until;
using ScratchDir = testing::CliScratch;
using namespace std::chrono_literals;

// One long cell per batch size: 1 ms per inference, so a worker measures until it is stopped.
std::string long_plan(const std::string& batches, const std::string& extra = "") {
    return "models: [null]\nbackends: [fault]\nbatch_sizes: [" + batches +
           "]\nduration: 30s\nwarmup: 0s\ntelemetry_enabled: false\n" + extra +
           "backend_options:\n  fault: {sleep_ms: 1}\n";
}

std::string integrity(const std::string& path) {
    const auto db = store::Database::open(path, SQLITE_OPEN_READWRITE);
    store::Statement check = db.prepare("PRAGMA integrity_check");
    return check.step() ? check.column_text(0) : "no answer";
}

void kill_all(const std::vector<pid_t>& pids) {
    for (const pid_t pid : pids) kill(pid, SIGKILL);
}

// The worker of `cli` once it runs, after `settle` more (to be inside the measured loop).
pid_t wait_for_worker(const std::string& tag, std::chrono::milliseconds settle = 300ms) {
    std::vector<pid_t> workers;
    EXPECT_TRUE(wait_until([&] { return !(workers = tagged_workers(tag)).empty(); }, 20s)) << "no worker started";
    std::this_thread::sleep_for(settle);
    return workers.empty() ? -1 : workers.front();
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

// -1 while the database or its tables do not exist yet.
std::int64_t ok_records(const std::string& path, std::int64_t run_id) {
    if (!std::filesystem::exists(path)) return -1;
    try {
        const auto db = store::Database::open(path, SQLITE_OPEN_READWRITE);
        store::Statement count = db.prepare("SELECT count(*) FROM benchmarks WHERE run_id = ?1 AND status = 'ok'");
        count.bind_int64(1, run_id);
        return count.step() ? count.column_int64(0) : -1;
    } catch (const std::exception&) {
        return -1;
    }
}

TEST(Resume, AWorkerDiesWithinASecondOfItsKilledOrchestrator) {
    ScratchDir dir;
    dir.write("plan.yaml", long_plan("1"));
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
    wait_for_worker(tag);
    cli.signal(SIGKILL);
    cli.wait();
    const bool gone = wait_until([&] { return tagged_workers(tag).empty(); }, 1s);
    EXPECT_TRUE(gone) << "the worker must not run on without its orchestrator";
    kill_all(tagged_workers(tag));
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto run = store.runs().at(0);
    EXPECT_EQ(run.status, RunStatus::interrupted) << "a run whose orchestrator is gone is not left running";
    EXPECT_THAT(run.end_reason, HasSubstr("orchestrator killed"));
}

// SIGTERM and SIGHUP end the worker's group at once (no grace), keep what it measured as an interrupted
// cell, close the run and exit with 128 + the signal.
void expect_stopped_by(int signal_number, const std::string& name) {
    ScratchDir dir;
    dir.write("plan.yaml", long_plan("1, 2"));
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
    wait_for_worker(tag);
    const auto sent = std::chrono::steady_clock::now();
    cli.signal(signal_number);
    const int status = cli.wait();
    EXPECT_LT(std::chrono::steady_clock::now() - sent, 3s) << "no 5 s grace for " << name;
    EXPECT_EQ(exit_code(status), 128 + signal_number) << cli.err();
    EXPECT_TRUE(tagged_workers(tag).empty()) << "the worker's group is killed before inferbench exits";
    kill_all(tagged_workers(tag));
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto run = store.runs().at(0);
    EXPECT_EQ(run.status, RunStatus::interrupted);
    EXPECT_EQ(run.end_reason, "stopped by " + name);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u) << "the plan does not go on";
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::interrupted);
    EXPECT_THAT(benchmarks[0].reason, HasSubstr("stopped by " + name + ": the worker was killed (during measurement)"));
    EXPECT_GT(store.iterations(benchmarks[0].benchmark_id).size(), 10u) << "what was measured is kept";
}

TEST(Resume, SigtermKillsTheWorkerAndClosesTheRun) { expect_stopped_by(SIGTERM, "SIGTERM"); }

TEST(Resume, SighupKillsTheWorkerAndClosesTheRun) { expect_stopped_by(SIGHUP, "SIGHUP"); }

// A SIGTERM once the last benchmark's worker has ended, while its 1.5 million iterations are stored, cuts
// nothing short: the benchmark is kept whole, the run completes and inferbench exits 0.
TEST(Resume, ASigtermOnceTheLastBenchmarkHasEndedInterruptsNothing) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nbatch_sizes: [1]\nduration: 30s\nwarmup: 0s\n"
                           "max_iterations: 1500000\ntelemetry_enabled: false\n");
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
    wait_for_worker(tag, 0ms);
    ASSERT_TRUE(wait_until([&] { return tagged_workers(tag).empty(); }, 20s)) << "the worker did not end";
    ASSERT_TRUE(testing::process_running("/proc/" + std::to_string(cli.pid())))
        << "inferbench ended before the signal; the test needs a longer store";
    cli.signal(SIGTERM);
    EXPECT_EQ(exit_code(cli.wait()), 0) << cli.err();
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    EXPECT_EQ(store.runs().at(0).status, RunStatus::completed);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok) << benchmarks[0].reason;
    EXPECT_EQ(store.iterations(benchmarks[0].benchmark_id).size(), 1'500'000u);
}

TEST(Resume, AWorkerOfAStoppedOrchestratorStillEndsAtItsTimeout) {
    ScratchDir dir;
    // A worker that hangs while measuring, so that only its timeout ends it.
    dir.write("plan.yaml", "models: [null]\nbackends: [fault]\nbatch_sizes: [1]\nduration: 100ms\nwarmup: 0s\n"
                           "telemetry_enabled: false\ntimeout: 1s\nbackend_options:\n  fault: {fault: hang, phase: measure}\n");
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
    const auto started = std::chrono::steady_clock::now();
    wait_for_worker(tag, 0ms);
    cli.signal(SIGSTOP);
    // Its own deadline is the timeout plus 1 s, so that a running orchestrator always acts first.
    const bool gone = wait_until([&] { return tagged_workers(tag).empty(); }, 6s);
    const auto took = std::chrono::steady_clock::now() - started;
    cli.signal(SIGCONT);
    EXPECT_TRUE(gone) << "a stopped orchestrator must not leave its worker running past the timeout";
    EXPECT_LT(took, 5s);
    kill_all(tagged_workers(tag));
    EXPECT_EQ(exit_code(cli.wait()), 1);
    const auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::failed);
    EXPECT_THAT(benchmarks[0].reason, HasSubstr("timed out after 1s"));
}

TEST(Resume, RunsOnlyTheCellsWithoutAnOkResultIntoTheSameRun) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [fault]\nbatch_sizes: [1, 2, 3]\nduration: 400ms\nwarmup: 0s\n"
                           "telemetry_enabled: false\nbackend_options:\n  fault: {sleep_ms: 1}\n");
    const std::string tag = unique_tag();
    {
        BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
        ASSERT_TRUE(wait_until([&] { return ok_records(dir.file("r.db"), 1) == 1; }, 20s));
        std::this_thread::sleep_for(100ms);  // into the second cell
        cli.signal(SIGTERM);
        EXPECT_EQ(exit_code(cli.wait()), 143);
    }
    const auto before = store::ResultsStore::open(dir.file("r.db")).benchmarks(1);
    ASSERT_EQ(before.size(), 2u);
    ASSERT_EQ(before[0].status, BenchmarkStatus::ok);
    ASSERT_EQ(before[1].status, BenchmarkStatus::interrupted);

    const auto listed = dir.run("run --resume latest --db r.db --dry-run");
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_THAT(listed.out, HasSubstr("   2  null fault"));
    EXPECT_THAT(listed.out, HasSubstr("   3  null fault"));
    EXPECT_THAT(listed.out, ::testing::Not(HasSubstr("   1  null")));
    EXPECT_THAT(listed.err, HasSubstr("2 of 3 benchmarks of run 1 would run again"));

    const auto resumed = dir.run("run --resume 1 --db r.db --quiet");
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_THAT(resumed.err, HasSubstr("resuming run 1: 2 of 3 benchmarks have no ok result"));
    EXPECT_THAT(resumed.err, HasSubstr("(run 1, resumed): 2 ok, 0 failed, 0 skipped"));
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    ASSERT_EQ(store.runs().size(), 1u) << "into the same run";
    EXPECT_EQ(store.runs()[0].status, RunStatus::completed);
    EXPECT_TRUE(store.runs()[0].end_reason.empty());
    const auto after = store.benchmarks(1);
    ASSERT_EQ(after.size(), 3u) << "the interrupted attempt is replaced";
    for (std::size_t i = 0; i < after.size(); ++i) {
        EXPECT_EQ(after[i].ordinal, static_cast<std::int64_t>(i));
        EXPECT_EQ(after[i].status, BenchmarkStatus::ok);
    }
    EXPECT_EQ(after[0].benchmark_id, before[0].benchmark_id) << "an ok cell is not run again";

    const auto again = dir.run("run --resume latest --db r.db");
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_THAT(again.err, HasSubstr("run 1: all 3 benchmarks are ok; nothing to resume"));
}

// The orchestrator killed after storing the last benchmark and before ending the run: nothing is left to
// measure, and the run is marked completed, ended when its last benchmark ended.
TEST(Resume, ARunWhoseEveryBenchmarkIsOkIsMarkedCompleted) {
    ScratchDir dir;
    const auto first = dir.run("run --backend null --model null --batch 1,2 --duration 10ms --warmup 0s "
                               "--db r.db --quiet");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    std::int64_t last_ended = 0;
    {
        auto store = store::ResultsStore::open(dir.file("r.db"));
        for (const auto& b : store.benchmarks(1)) last_ended = std::max(last_ended, b.ended_unix_ms);
        store.end_run(1, last_ended + 5000, RunStatus::interrupted, "its orchestrator is gone");
    }
    const auto listed = dir.run("run --resume latest --db r.db --dry-run");
    EXPECT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_EQ(store::ResultsStore::open(dir.file("r.db")).runs().at(0).status, RunStatus::interrupted)
        << "a dry run changes nothing";

    const auto resumed = dir.run("run --resume latest --db r.db");
    EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_THAT(resumed.err, HasSubstr("run 1: all 2 benchmarks are ok; nothing to resume (it was marked interrupted, "
                                       "as its orchestrator stopped before ending it; now marked completed)"));
    const auto run = store::ResultsStore::open(dir.file("r.db")).runs().at(0);
    EXPECT_EQ(run.status, RunStatus::completed);
    EXPECT_EQ(run.ended_unix_ms, last_ended);
    EXPECT_TRUE(run.end_reason.empty());

    const auto again = dir.run("run --resume latest --db r.db");
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_THAT(again.err, HasSubstr("run 1: all 2 benchmarks are ok; nothing to resume\n"));
}

TEST(Resume, ClearErrors) {
    ScratchDir dir;
    const auto no_db = dir.run("run --resume latest --db none.db");
    EXPECT_EQ(no_db.exit_code, 2);
    EXPECT_THAT(no_db.err, HasSubstr("--resume latest: no results database at none.db; give --db PATH"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("none.db"))) << "looking must not create a database";

    const auto first = dir.run("run --backend null --model null --duration 10ms --warmup 0s --db r.db --quiet");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    const auto unknown = dir.run("run --resume 99 --db r.db");
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_THAT(unknown.err, HasSubstr("--resume 99: r.db has no run with id 99"));
    const auto not_a_number = dir.run("run --resume last --db r.db");
    EXPECT_EQ(not_a_number.exit_code, 2);
    EXPECT_THAT(not_a_number.err, HasSubstr("--resume last: give a run id (a number >= 1) or latest"));
    const auto with_plan = dir.run("run --resume latest --db r.db --batch 4 --set seed=1");
    EXPECT_EQ(with_plan.exit_code, 2);
    EXPECT_THAT(with_plan.err, HasSubstr("takes no plan input (--batch, --set)"));
}

TEST(Resume, RefusesARunStillBeingWritten) {
    ScratchDir dir;
    dir.write("plan.yaml", long_plan("1"));
    const std::string tag = unique_tag();
    BackgroundCli cli(dir, {"run", "plan.yaml", "--db", "r.db", "--quiet"}, tag);
    wait_for_worker(tag, 0ms);
    const auto refused = dir.run("run --resume latest --db r.db");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_THAT(refused.err, HasSubstr("--resume 1: the run is still being written by inferbench (pid " +
                                       std::to_string(cli.pid())));
    cli.signal(SIGTERM);
    cli.wait();
}

// A mix of phases per run: a null-backend cell writes 100000 iterations (store-writing), two fault-backend
// cells sleep 1 ms per inference (measurement); each has 100 ms of warm-up and its load.
constexpr const char* kKillPlan =
    "models: [null]\nbackends: [null, fault]\nbatch_sizes: [1, 2]\nexclude: [{backend: null, batch_size: 2}]\n"
    "warmup: 100ms\nduration: 300ms\nmax_iterations: 100000\nbackend_options:\n  fault: {sleep_ms: 1}\n";
constexpr std::size_t kKillPlanCells = 3;
constexpr int kKills = 20;

// Each run's records: one per cell, every one ok.
void expect_measured_exactly_once(const store::ResultsStore& store) {
    for (const auto& run : store.runs()) {
        EXPECT_EQ(run.status, RunStatus::completed) << "run " << run.run_id;
        std::map<std::int64_t, int> per_ordinal;
        for (const auto& b : store.benchmarks(run.run_id)) {
            ++per_ordinal[b.ordinal];
            EXPECT_EQ(b.status, BenchmarkStatus::ok) << "run " << run.run_id << " cell " << b.ordinal << ": " << b.reason;
        }
        EXPECT_EQ(per_ordinal.size(), kKillPlanCells) << "run " << run.run_id;
        for (const auto& [ordinal, count] : per_ordinal)
            EXPECT_EQ(count, 1) << "run " << run.run_id << " cell " << ordinal << " has " << count << " records";
    }
}

TEST(Resume, KillingTheOrchestratorAtRandomPointsLosesNothingAndLeavesNoOrphan) {
    ScratchDir dir;
    dir.write("plan.yaml", kKillPlan);
    const std::string tag = unique_tag();
    const std::vector<std::string> new_run = {"run", "plan.yaml", "--db", "r.db", "--quiet"};
    const std::vector<std::string> resume = {"run", "--resume", "latest", "--db", "r.db", "--quiet"};
    const auto calibration_begin = std::chrono::steady_clock::now();
    {
        BackgroundCli whole(dir, new_run, tag, "whole");
        ASSERT_EQ(exit_code(whole.wait()), 0) << whole.err();
    }
    const auto whole_run = std::chrono::steady_clock::now() - calibration_begin;
    const unsigned seed = std::random_device{}();
    std::mt19937 random(seed);
    std::uniform_real_distribution<double> jitter(0.0, 1.0);
    int with_worker = 0;
    int orphans = 0;
    for (int i = 0; i < kKills; ++i) {
        // Even kills: spread evenly over a whole run, each at a random place within its slice (start-up,
        // store writes, the gaps between cells). Odd kills: at a random point of a worker's first 500 ms
        // (load, warm-up, measurement), where a run spends little of its wall time on a busy machine.
        using Us = std::chrono::microseconds;
        const Us delay = i % 2 == 0 ? std::chrono::duration_cast<Us>(whole_run * (2 * (i / 2) + jitter(random) * 2) / kKills)
                                    : std::chrono::duration_cast<Us>(500ms * jitter(random));
        const bool resuming = store::ResultsStore::open(dir.file("r.db")).latest_run()->status != RunStatus::completed;
        BackgroundCli cli(dir, resuming ? resume : new_run, tag, "kill");
        if (i % 2 == 1) wait_until([&] { return !tagged_workers(tag).empty(); }, 5s);
        std::this_thread::sleep_for(delay);
        with_worker += tagged_workers(tag).empty() ? 0 : 1;
        cli.signal(SIGKILL);
        cli.wait();
        if (!wait_until([&] { return tagged_workers(tag).empty(); }, 1500ms)) {
            ++orphans;
            kill_all(tagged_workers(tag));
        }
        ASSERT_EQ(integrity(dir.file("r.db")), "ok") << "after kill " << i << " at " << delay.count() << " us";
    }
    for (const auto& run : store::ResultsStore::open(dir.file("r.db")).runs()) {
        if (run.status == RunStatus::completed) continue;
        const auto finished = dir.run("run --resume " + std::to_string(run.run_id) + " --db r.db --quiet");
        EXPECT_EQ(finished.exit_code, 0) << finished.err;
    }
    std::cout << "killed " << kKills << " times (seed " << seed << ", whole run "
              << std::chrono::duration_cast<std::chrono::milliseconds>(whole_run).count() << " ms), " << with_worker
              << " with a worker running; orphans left: " << orphans << "\n";
    EXPECT_EQ(orphans, 0);
    EXPECT_GE(with_worker, kKills / 4) << "many kill points should fall while a worker runs";
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    EXPECT_GE(store.runs().size(), 2u);
    expect_measured_exactly_once(store);
}

}  // namespace
}  // namespace inferbench
