// A runner program as a child process: stdin, stdout and stderr on pipes; a process group of its own,
// so that it and whatever it starts (compiler workers) can be signalled together; killed by the
// kernel when the thread that started it dies (PR_SET_PDEATHSIG), so a worker killed on a timeout
// leaves no runner behind.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace inferbench::external {

struct ExitStatus {
    bool exited = false;  // exited normally, with code
    int code = -1;
    int signal = 0;  // the signal that ended it

    bool success() const { return exited && code == 0; }
    std::string describe() const;  // "exit code 1", "killed by signal 11 (SEGV)"
};

class ChildProcess {
public:
    // Starts argv (argv[0] is looked up on PATH when it has no '/'), writes `input` to its stdin and
    // closes it. A program that cannot be started exits with code 127 and says why on stderr.
    // forward_stderr: the child's stderr is also copied to ours as it arrives.
    ChildProcess(const std::vector<std::string>& argv, const std::string& input, bool forward_stderr);
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;
    // Kills the whole process group if it still runs, and reaps the child.
    ~ChildProcess();

    // Waits up to timeout_ms for output and appends the complete stdout lines received to `lines`.
    // Returns false once stdout is closed and every line was handed out.
    bool read_lines(int timeout_ms, std::vector<std::string>& lines);
    // To the runner itself (SIGTERM: stop measuring).
    void send_signal(int signal_number) const;
    // SIGKILL to the runner and everything in its process group.
    void kill_group();
    // Waits for the runner to end; after timeout_ns it kills the process group. Kills whatever is left
    // in the group once the runner has ended.
    ExitStatus wait(std::int64_t timeout_ns);

    // The last `max_lines` non-empty lines of stderr, joined with " | ".
    std::string stderr_tail(std::size_t max_lines) const;
    std::int64_t started_ns() const { return started_ns_; }

private:
    void drain_stderr();
    bool drain_stdout();
    std::optional<ExitStatus> poll_exit();

    pid_t pid_ = -1;
    int stdout_fd_ = -1;
    int stderr_fd_ = -1;
    bool forward_stderr_ = false;
    bool reaped_ = false;
    ExitStatus status_;
    std::string stdout_pending_;
    std::string stderr_tail_;
    std::int64_t started_ns_ = 0;
};

}  // namespace inferbench::external
