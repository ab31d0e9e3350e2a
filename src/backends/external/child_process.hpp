// A runner program as a child process (core/process/subprocess.hpp): the request on stdin, stdout read as
// protocol lines, stderr kept as a tail; a process group of its own, so that it and whatever it
// starts (compiler workers) can be signalled together; killed by the kernel when the thread that
// started it dies (PR_SET_PDEATHSIG), so a worker killed on a timeout leaves no runner behind.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/process/subprocess.hpp"

namespace inferbench::external {

class ChildProcess {
public:
    // Starts argv (argv[0] is looked up on PATH when it has no '/'), writes `input` to its stdin and
    // closes it. A program that cannot be started exits with code 127 and says why on stderr.
    // forward_stderr: the child's stderr is also copied to ours as it arrives.
    // command_fd >= 0: the child also gets a pipe's read end as that descriptor, which send_command() writes
    // (a generative cell's commands); its end of file ends the child's commands.
    ChildProcess(const std::vector<std::string>& argv, const std::string& input, bool forward_stderr,
                 int command_fd = -1);

    // One line (the newline added) on the command descriptor; blocks until the child took it. Throws
    // EnvironmentError when the child closed it (it ended).
    void send_command(std::string_view line);

    // Waits up to timeout_ms for output and appends the complete stdout lines received to `lines`.
    // Returns false once stdout is closed and every line was handed out.
    bool read_lines(int timeout_ms, std::vector<std::string>& lines);
    // To the runner itself (SIGTERM: stop measuring).
    void send_signal(int signal_number) const { child_.signal(signal_number); }
    // SIGKILL to the runner and everything in its process group.
    void kill_group() const;
    // Waits for the runner to end, reading its output meanwhile (read_lines hands out what stdout
    // gave); after timeout_ns it kills the process group, and says so in *timed_out where given.
    // Kills whatever is left in the group once the runner has ended.
    ExitStatus wait(std::int64_t timeout_ns, bool* timed_out = nullptr);

    // The last `max_lines` non-empty lines of stderr, joined with " | ".
    std::string stderr_tail(std::size_t max_lines) const;
    std::int64_t started_ns() const { return child_.started_ns(); }

private:
    void drain_stderr();
    bool drain_stdout();

    UniqueFd commands_;  // our end of the command pipe, opened before child_ (its read end is the child's)
    Child child_;
    bool forward_stderr_ = false;
    std::string stdout_pending_;
    TailBuffer stderr_tail_;
};

}  // namespace inferbench::external
