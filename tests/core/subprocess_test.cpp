// The subprocess facility: exit statuses, stdin to stdout, descriptor mapping, process-group kills,
// nothing inherited by accident.
#include "core/process/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <thread>

#include "core/clock.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;

// Everything the child writes on stdout (and stderr, when merged), until it ends.
std::string read_all(Child& child) {
    std::string text;
    while (child.stdout_pipe()) {
        wait_readable({child.stdout_pipe().get()}, 100);
        drain(child.stdout_pipe(), [&](std::string_view data) { text.append(data); });
    }
    return text;
}

Child shell(const std::string& script, SpawnOptions options = {}) { return spawn({"/bin/sh", "-c", script}, options); }

bool alive(pid_t pid) { return kill(pid, 0) == 0; }

TEST(Subprocess, ExitCodesAndSignals) {
    EXPECT_TRUE(shell("exit 0").wait().success());
    const ExitStatus three = shell("exit 3").wait();
    EXPECT_TRUE(three.exited);
    EXPECT_EQ(three.code, 3);
    EXPECT_EQ(three.describe(), "exit code 3");
    const ExitStatus killed = shell("kill -SEGV $$").wait();
    EXPECT_FALSE(killed.exited);
    EXPECT_EQ(killed.signal, SIGSEGV);
    EXPECT_EQ(killed.describe(), "killed by signal 11 (SEGV)");
}

TEST(Subprocess, AProgramThatCannotStartExits127AndSaysWhy) {
    SpawnOptions options;
    options.stderr_mode = Output::merge;
    Child child = spawn({"inferbench-no-such-program"}, options);
    EXPECT_THAT(read_all(child), HasSubstr("cannot start inferbench-no-such-program"));
    EXPECT_EQ(child.wait().code, 127);
}

TEST(Subprocess, StdinToStdoutRoundTripAndSeparateStderr) {
    SpawnOptions options;
    options.input = std::string(100'000, 'a') + "\n";  // more than a pipe holds
    Child child = shell("wc -c; echo oops >&2", options);
    EXPECT_EQ(read_all(child), "100001\n");
    std::string err;
    drain(child.stderr_pipe(), [&](std::string_view data) { err.append(data); });
    EXPECT_EQ(err, "oops\n");
    EXPECT_TRUE(child.wait().success());
}

TEST(Subprocess, MapsDescriptorsCwdAndEnvironment) {
    Pipe extra = make_pipe();
    SpawnOptions options;
    options.fds = {{5, extra.write.get()}};
    options.cwd = "/tmp";
    options.env = {"INFERBENCH_TEST_VALUE=42"};
    Child child = shell("echo \"$(pwd) $INFERBENCH_TEST_VALUE\" >&5", options);
    extra.write.reset();
    EXPECT_TRUE(child.wait().success());
    set_nonblocking(extra.read);
    std::string text;
    drain(extra.read, [&](std::string_view data) { text.append(data); });
    EXPECT_EQ(text, "/tmp 42\n");
}

TEST(Subprocess, NoDescriptorLeaksIntoTheChild) {
    const int leaky = fcntl(open("/dev/null", O_RDONLY), F_DUPFD, 20);  // inheritable on purpose
    ASSERT_GE(leaky, 20);
    SpawnOptions options;
    options.fds = {{3, leaky}};
    Child child = spawn({"ls", "/proc/self/fd"}, options);
    std::istringstream listing(read_all(child));
    close(leaky);
    EXPECT_TRUE(child.wait().success());
    std::vector<int> fds;
    for (int fd; listing >> fd;) fds.push_back(fd);
    // 0-2, the mapped 3, and the one ls opened to read the directory.
    EXPECT_THAT(fds, ::testing::ElementsAre(0, 1, 2, 3, 4));
}

TEST(Subprocess, GroupKillKillsGrandchildren) {
    SpawnOptions options;
    options.new_process_group = true;
    Child child = shell("sleep 60 & echo $!; wait", options);
    std::string line;
    while (line.find('\n') == std::string::npos) {
        wait_readable({child.stdout_pipe().get()}, 100);
        drain(child.stdout_pipe(), [&](std::string_view data) { line.append(data); });
    }
    const pid_t grandchild = std::stoi(line);
    ASSERT_TRUE(alive(grandchild));
    child.signal_group(SIGKILL);
    EXPECT_EQ(child.wait().signal, SIGKILL);
    const std::int64_t deadline = monotonic_ns() + 5'000'000'000;
    while (alive(grandchild) && monotonic_ns() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_FALSE(alive(grandchild));  // reaped by init once killed
}

TEST(Subprocess, AChildThatIgnoresSigtermNeedsSigkill) {
    SpawnOptions options;
    options.new_process_group = true;
    Child child = shell("trap '' TERM; echo ready; while true; do sleep 0.05; done", options);
    std::string ready;
    while (ready.empty()) {
        wait_readable({child.stdout_pipe().get()}, 100);
        drain(child.stdout_pipe(), [&](std::string_view data) { ready.append(data); });
    }
    child.signal(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_FALSE(child.try_wait().has_value()) << "SIGTERM is ignored";
    child.signal_group(SIGKILL);
    EXPECT_EQ(child.wait().signal, SIGKILL);
}

TEST(Subprocess, TailKeepsTheLastBytesAndLines) {
    TailBuffer tail(10);
    tail.append("first line\nsecond\n\n");
    tail.append("third\n");
    EXPECT_EQ(tail.text(), "nd\n\nthird\n");
    TailBuffer lines(100);
    lines.append("a\n  \nb\nc\n");
    EXPECT_EQ(lines.last_lines(2, 100, " | "), "b | c");
    // A long line is cut at a word, and says so; a word longer than half the limit is cut where it must.
    TailBuffer long_line(100);
    long_line.append("ModuleNotFoundError: No module named torchvision\n");
    EXPECT_EQ(long_line.last_lines(1, 40, " | "), "ModuleNotFoundError: No module named...");
    EXPECT_EQ(long_line.last_lines(1, 12, " | "), "ModuleNotFou...");
}

TEST(Subprocess, TailIsPlainTextWithoutTheTerminalsColours) {
    // ONNX Runtime's warning as its CUDA provider printed it on the H200, before the crash it preceded.
    TailBuffer tail(1000);
    tail.append("\x1b[0;93m2026-12-04 15:51:53.826 [W:onnxruntime:, session_state.cc:1400] Rerunning with verbose");
    tail.append(" output\x1b[m\nlast \x1b[1mbold\x1b[0m and a stray \x1b byte\n");
    EXPECT_EQ(tail.text(), "2026-12-04 15:51:53.826 [W:onnxruntime:, session_state.cc:1400] Rerunning with verbose "
                           "output\nlast bold and a stray  byte\n");
    EXPECT_EQ(tail.last_lines(1, 100, " | "), "last bold and a stray  byte");
}

TEST(RunCaptured, CollectsBothStreamsAndTheExitStatus) {
    const CapturedRun run = run_captured({"/bin/sh", "-c", "cat; echo err >&2; exit 3"}, std::string("in\n"));
    EXPECT_EQ(run.out, "in\n");
    EXPECT_EQ(run.err, "err\n");
    EXPECT_TRUE(run.status.exited);
    EXPECT_EQ(run.status.code, 3);
    EXPECT_FALSE(run.timed_out);
}

TEST(RunCaptured, KillsTheProcessGroupPastTheTimeout) {
    const std::int64_t begin = monotonic_ns();
    const CapturedRun run = run_captured({"/bin/sh", "-c", "echo started; sleep 30 & sleep 30"}, std::nullopt, 200);
    EXPECT_TRUE(run.timed_out);
    EXPECT_FALSE(run.status.success());
    EXPECT_EQ(run.out, "started\n");
    EXPECT_LT(monotonic_ns() - begin, 10'000'000'000);
}

}  // namespace
}  // namespace inferbench
