// The one supervisor: a child that ends by itself, a stop that escalates through its steps (a request,
// then signals), a kill request, the timeout, a log file, and run_captured on top of it.
#include "core/process/supervise.hpp"

#include <signal.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <thread>

#include "common/scratch_dir.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

constexpr std::int64_t kMs = 1'000'000;

Child shell(const std::string& script, bool own_group = false) {
    SpawnOptions options;
    options.new_process_group = own_group;
    return spawn({"/bin/sh", "-c", script}, options);
}

TEST(Supervise, AChildThatEndsByItselfIsNotStopped) {
    Child child = shell("exit 4");
    const Supervised result = supervise(child, {});
    EXPECT_TRUE(result.status.exited);
    EXPECT_EQ(result.status.code, 4);
    EXPECT_FALSE(result.stopped);
    EXPECT_FALSE(result.timed_out);
}

// The request comes once the child has exited but before the supervisor has looked again (the child not
// yet reaped): it stops nothing, for a clean exit with a stop would read as interrupted work.
TEST(Supervise, ARequestAfterTheChildHasEndedStopsNothing) {
    for (const bool kill : {false, true}) {
        Child child = shell("sleep 0.1; exit 0");
        const auto has_exited = [pid = child.pid()] {
            siginfo_t info{};
            return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) == 0;  // waits, reaps nothing
        };
        StopPolicy policy;
        (kill ? policy.kill_now : policy.should_stop) = has_exited;
        const Supervised result = supervise(child, policy);
        EXPECT_TRUE(result.status.exited) << kill;
        EXPECT_EQ(result.status.code, 0) << kill;
        EXPECT_FALSE(result.stop_requested) << kill;
        EXPECT_FALSE(result.stopped) << kill;
    }
}

TEST(Supervise, AStopRequestSendsTheFirstSignalAndTheChildMayStillExitCleanly) {
    Child child = shell("trap 'exit 3' INT; while :; do sleep 0.05; done");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the trap is set
    StopPolicy policy;
    policy.should_stop = [] { return true; };
    policy.signals = {SIGINT, SIGKILL};
    policy.grace_ns = 10'000 * kMs;
    const Supervised result = supervise(child, policy);
    EXPECT_TRUE(result.stopped);
    EXPECT_FALSE(result.timed_out);
    EXPECT_TRUE(result.status.exited) << result.status.describe();
    EXPECT_EQ(result.status.code, 3);
}

TEST(Supervise, TheTimeoutEscalatesToTheNextSignalAfterTheGrace) {
    const std::int64_t begin = monotonic_ns();
    Child child = shell("trap '' INT; sleep 30", true);
    StopPolicy policy;
    policy.timeout_ns = 100 * kMs;
    policy.signals = {SIGINT, SIGKILL};
    policy.grace_ns = 200 * kMs;
    policy.whole_group = true;  // the sleep goes too
    int polls = 0;
    const Supervised result = supervise(child, policy, [&polls](int wait_ms) {
        ++polls;
        std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
    });
    EXPECT_TRUE(result.stopped);
    EXPECT_TRUE(result.timed_out);
    EXPECT_FALSE(result.status.exited);
    EXPECT_EQ(result.status.signal, SIGKILL);
    EXPECT_GE(monotonic_ns() - begin, 300 * kMs) << "SIGKILL only one grace after SIGINT";
    EXPECT_LT(monotonic_ns() - begin, 10'000 * kMs);
    EXPECT_GT(polls, 0) << "the caller's work runs between the looks at the child";
}

TEST(Supervise, AStopWithAnAskStepAsksFirstAndSignalsOneGraceLater) {
    const std::int64_t begin = monotonic_ns();
    Child child = shell("sleep 30", true);
    StopPolicy policy;
    policy.should_stop = [] { return true; };
    std::int64_t asked_ns = 0;
    policy.ask = [&asked_ns] { asked_ns = monotonic_ns(); };
    policy.grace_ns = 1'000 * kMs;
    policy.whole_group = true;
    const Supervised result = supervise(child, policy);
    EXPECT_GT(asked_ns, 0);
    EXPECT_LT(asked_ns - begin, 500 * kMs) << "the request comes at once";
    EXPECT_GE(monotonic_ns() - asked_ns, 1'000 * kMs) << "SIGKILL only one grace after the request";
    EXPECT_EQ(result.status.signal, SIGKILL);
    EXPECT_TRUE(result.stop_requested);
    EXPECT_TRUE(result.stopped);
}

TEST(Supervise, AKillRequestSkipsTheGrace) {
    const std::int64_t begin = monotonic_ns();
    Child child = shell("trap '' INT; sleep 30", true);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the trap is set
    StopPolicy policy;
    policy.should_stop = [] { return true; };
    policy.signals = {SIGINT, SIGKILL};
    policy.grace_ns = 10'000 * kMs;
    int polls = 0;
    policy.kill_now = [&polls] { return ++polls > 3; };  // a termination after the stop began
    policy.whole_group = true;
    const Supervised result = supervise(child, policy);
    EXPECT_EQ(result.status.signal, SIGKILL);
    EXPECT_TRUE(result.stop_requested);
    EXPECT_FALSE(result.timed_out);
    EXPECT_LT(monotonic_ns() - begin, 5'000 * kMs) << "no grace once a kill is asked for";
}

TEST(Supervise, ATimeoutThatKillsCountsFromTheGivenStartAndSkipsTheSequence) {
    const std::int64_t begin = monotonic_ns();
    Child child = shell("trap '' INT; sleep 30", true);
    StopPolicy policy;
    policy.timeout_ns = 2'100 * kMs;
    policy.timeout_from_ns = begin - 2'000 * kMs;  // the child has already had most of its time
    policy.timeout_kills = true;
    policy.signals = {SIGINT, SIGKILL};
    policy.grace_ns = 10'000 * kMs;
    policy.whole_group = true;
    policy.poll_ms = 5;
    const Supervised result = supervise(child, policy);
    EXPECT_TRUE(result.timed_out);
    EXPECT_TRUE(result.stopped);
    EXPECT_FALSE(result.stop_requested);
    EXPECT_EQ(result.status.signal, SIGKILL);
    EXPECT_LT(monotonic_ns() - begin, 1'500 * kMs) << "the timeout counts from timeout_from_ns";
}

TEST(RunLogged, BothStreamsGoToTheLog) {
    const testing::ScratchDir dir;
    const auto log = dir.path() / "tool.log";
    const Supervised result = run_logged({"/bin/sh", "-c", "echo out; echo err >&2; exit 2"}, log);
    EXPECT_EQ(result.status.code, 2);
    std::ifstream in(log);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "out\nerr\n");
    EXPECT_THROW(run_logged({"inferbench-no-such-program"}, log), EnvironmentError);
    EXPECT_THROW(run_logged({"/bin/true"}, dir.path() / "no-such-dir" / "tool.log"), EnvironmentError);
}

// A child that closes its output early still meets the timeout (it used to be waited for without one).
TEST(RunCaptured, TheTimeoutHoldsForAChildThatClosedItsOutput) {
    const std::int64_t begin = monotonic_ns();
    const CapturedRun run =
        run_captured({"/bin/sh", "-c", "echo early; exec >/dev/null 2>&1; sleep 30"}, std::nullopt, 200);
    EXPECT_TRUE(run.timed_out);
    EXPECT_EQ(run.out, "early\n");
    EXPECT_LT(monotonic_ns() - begin, 10'000 * kMs);
}

}  // namespace
}  // namespace inferbench
