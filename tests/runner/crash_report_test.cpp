// The worker's crash report: a process that crashes after install_crash_report() writes its native stack and one
// last line that says where, and still ends by the signal that struck it.
#include "runner/worker/crash_report.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferbench::runner {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;

struct Ended {
    int signal = 0;  // 0 where the child exited
    std::string err;

    std::string last_line() const {
        const std::string text = err.substr(0, err.find_last_not_of('\n') + 1);
        return text.substr(text.find_last_of('\n') + 1);
    }
};

// Runs `crash` in a child with the report installed; its stderr and the signal that ended it.
Ended crash_in_child(const std::function<void()>& crash) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) return {};
    const pid_t pid = fork();
    if (pid == 0) {
        dup2(pipe_fds[1], STDERR_FILENO);
        close(pipe_fds[0]);
        install_crash_report();
        crash();
        _exit(0);
    }
    close(pipe_fds[1]);
    Ended ended;
    char buffer[4096];
    for (ssize_t n; (n = read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
        ended.err.append(buffer, static_cast<std::size_t>(n));
    close(pipe_fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ended.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return ended;
}

TEST(CrashReport, AnInvalidWriteSaysWhereAndWhatItTouched) {
    const Ended ended = crash_in_child([] {
        int* volatile nowhere = reinterpret_cast<int*>(0x10);
        *nowhere = 1;
    });
    EXPECT_EQ(ended.signal, SIGSEGV) << "the process still ends by the signal";
    EXPECT_THAT(ended.err, HasSubstr("inferbench worker: crashed; the native stack:\n"));
    // The faulting instruction is in this test's executable, which exports no symbols for it.
    EXPECT_THAT(ended.last_line(), MatchesRegex("inferbench worker: signal 11 \\(SEGV\\) at runner_tests\\+0x[0-9a-f]+"
                                                ".*, address 0x10"))
        << ended.err;
}

TEST(CrashReport, AFaultInsideAnotherLibraryNamesThatLibrary) {
    // A bad pointer handed to a library, as to a framework's: the fault strikes inside libc, not in this program.
    const Ended ended = crash_in_child([] {
        const char* volatile nowhere = nullptr;
        std::exit(static_cast<int>(std::strlen(nowhere)));
    });
    EXPECT_EQ(ended.signal, SIGSEGV);
    EXPECT_THAT(ended.last_line(),
                MatchesRegex("inferbench worker: signal 11 \\(SEGV\\) at libc\\.so\\.6\\+0x[0-9a-f]+.*, "
                             "address 0x0"))
        << ended.err;
}

TEST(CrashReport, AnAbortNamesTheSignalAndNoAddress) {
    const Ended ended = crash_in_child([] { std::abort(); });
    EXPECT_EQ(ended.signal, SIGABRT);
    EXPECT_THAT(ended.last_line(), MatchesRegex("inferbench worker: signal 6 \\(ABRT\\) at .*")) << ended.err;
    EXPECT_THAT(ended.last_line(), ::testing::Not(HasSubstr("address"))) << ended.err;
}

TEST(CrashReport, ASignalSentByAnotherProcessSaysWhichSent) {
    const Ended ended = crash_in_child([] { kill(getpid(), SIGBUS); });
    EXPECT_EQ(ended.signal, SIGBUS);
    EXPECT_THAT(ended.last_line(), MatchesRegex("inferbench worker: signal 7 \\(BUS\\) at .*, sent by process [0-9]+"))
        << ended.err;
}

}  // namespace
}  // namespace inferbench::runner
