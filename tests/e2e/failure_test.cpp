// A worker that crashes, hangs or errors is recorded as failed with the reason, its process tree is
// cleaned up, what it measured is kept, and the next benchmark of the plan completes.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <regex>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

// Batch 2 carries the fault; batch 1 afterwards must run normally.
std::string fault_plan(const std::string& fault, const std::string& phase, const std::string& extra = "") {
    return "models: [null]\nbackends: [fault]\nbatch_sizes: [2, 1]\nduration: 100ms\nwarmup: 0s\n" + extra +
           "backend_options:\n  fault: {fault: " + fault + ", phase: " + phase + ", fault_batch: 2}\n";
}

std::vector<store::BenchmarkRecord> run_fault_plan(const ScratchDir& dir, const std::string& plan, int expected_exit) {
    dir.write("plan.yaml", plan);
    const auto r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, expected_exit) << r.err;
    auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    EXPECT_EQ(benchmarks.size(), 2u);
    if (benchmarks.size() == 2) {
        EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::ok) << "the plan must go on after a failure";
    }
    return benchmarks;
}

TEST(Failures, SigkillDuringLoad) {
    ScratchDir dir;
    const auto b = run_fault_plan(dir, fault_plan("sigkill", "load"), 1);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].status, BenchmarkStatus::failed);
    EXPECT_NE(b[0].reason.find("killed by signal 9 (KILL) (during load)"), std::string::npos) << b[0].reason;
    EXPECT_NE(b[0].reason.find("last output: fault backend: striking with sigkill"), std::string::npos) << b[0].reason;
    EXPECT_NE(b[0].stderr_tail.find("striking with sigkill"), std::string::npos);
}

TEST(Failures, SigkillDuringMeasurementKeepsTheIterationsMeasured) {
    ScratchDir dir;
    const auto b = run_fault_plan(dir, fault_plan("sigkill", "measure", "warmup_iterations: 0\n"), 1);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].status, BenchmarkStatus::failed);
    EXPECT_NE(b[0].reason.find("(during measurement)"), std::string::npos) << b[0].reason;
    const auto iterations = store::ResultsStore::open(dir.file("r.db")).iterations(b[0].benchmark_id);
    EXPECT_EQ(iterations.size(), 49u) << "the 49 iterations before the 50th inference died are kept";
}

TEST(Failures, SegfaultSaysWhereInNativeCode) {
    ScratchDir dir;
    const auto b = run_fault_plan(dir, fault_plan("segfault", "load"), 1);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].status, BenchmarkStatus::failed);
    // The ending as the process ended, then the worker's last line: the library and offset it struck at.
    EXPECT_THAT(b[0].reason, ::testing::MatchesRegex("killed by signal 11 \\(SEGV\\) \\(during load\\); last output: "
                                                   "inferbench worker: signal 11 \\(SEGV\\) at "
                                                   "libinferbench_backend_fault\\.so\\+0x[0-9a-f]+.*, address 0x0"));
    EXPECT_THAT(b[0].stderr_tail, ::testing::HasSubstr("striking with segfault"));
    EXPECT_THAT(b[0].stderr_tail, ::testing::HasSubstr("the native stack:"));
    EXPECT_THAT(b[0].stderr_tail, ::testing::HasSubstr("libinferbench_backend_fault.so("));
}

TEST(Failures, ExceptionInTheBackendIsReportedWithItsMessage) {
    ScratchDir dir;
    const auto b = run_fault_plan(dir, fault_plan("throw", "load"), 1);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].reason, "load failed: injected failure");
}

TEST(Failures, ExitCode) {
    ScratchDir dir;
    const auto b = run_fault_plan(dir, fault_plan("exit", "load"), 1);
    ASSERT_EQ(b.size(), 2u);
    EXPECT_NE(b[0].reason.find("exited with code 7 (during load)"), std::string::npos) << b[0].reason;
}

TEST(Failures, HangPastTheTimeoutIsKilledWithItsChildren) {
    ScratchDir dir;
    const auto start = std::chrono::steady_clock::now();
    const auto b = run_fault_plan(dir, fault_plan("hang_with_child", "load", "timeout: 1s\n"), 1);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    ASSERT_EQ(b.size(), 2u);
    EXPECT_EQ(b[0].status, BenchmarkStatus::failed);
    EXPECT_NE(b[0].reason.find("timed out after 1s; the worker and its children were killed (during load)"),
              std::string::npos)
        << b[0].reason;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(b[0].stderr_tail, match, std::regex("child pid (\\d+)"))) << b[0].stderr_tail;
    const pid_t child = std::stoi(match[1]);
    bool gone = false;
    for (int i = 0; i < 50 && !gone; ++i) {  // the child is reaped by init shortly after the kill
        gone = kill(child, 0) != 0;
        if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(gone) << "the worker's child " << child << " must not outlive it";
}

TEST(Failures, CtrlCStopsTheBenchmarkKeepsItsIterationsAndEndsThePlan) {
    ScratchDir dir;
    dir.write("plan.yaml",
              "models: [null]\nbackends: [fault]\nbatch_sizes: [1, 2]\nduration: 60s\nwarmup: 0s\n"
              "backend_options:\n  fault: {sleep_ms: 2}\n");
    const pid_t pid = fork();
    if (pid == 0) {
        setenv("INFERBENCH_BACKEND_PATH", INFERBENCH_TEST_BACKEND_DIR, 1);
        chdir(dir.path().c_str());
        freopen("/dev/null", "w", stdout);
        freopen("/dev/null", "w", stderr);
        execl(INFERBENCH_EXE, INFERBENCH_EXE, "run", "plan.yaml", "--db", "r.db", static_cast<char*>(nullptr));
        _exit(127);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    kill(pid, SIGINT);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    EXPECT_EQ(store.runs().at(0).status, RunStatus::interrupted);
    const auto b = store.benchmarks();
    ASSERT_EQ(b.size(), 1u) << "the plan does not go on after Ctrl-C";
    EXPECT_EQ(b[0].status, BenchmarkStatus::interrupted);
    EXPECT_GT(store.iterations(b[0].benchmark_id).size(), 10u);
}

}  // namespace
}  // namespace inferbench
