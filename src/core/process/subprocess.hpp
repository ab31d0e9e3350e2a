// The one way inferbench starts a child process: fork and exec with the stdio and extra descriptors
// the caller asks for, nothing else inherited, optionally in a process group of its own. This file
// gives the pieces (non-blocking pipes, try_wait, group signals, a tail buffer); waiting for a child
// under a timeout or a stop request is core/process/supervise.hpp.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferbench {

// An owned file descriptor, closed on destruction.
class UniqueFd {
public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(UniqueFd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    UniqueFd& operator=(UniqueFd&& other) noexcept;
    UniqueFd(const UniqueFd&) = delete;
    UniqueFd& operator=(const UniqueFd&) = delete;
    ~UniqueFd() { reset(); }

    int get() const { return fd_; }
    explicit operator bool() const { return fd_ >= 0; }
    void reset();

private:
    int fd_ = -1;
};

struct Pipe {
    UniqueFd read;
    UniqueFd write;
};
// Both ends close-on-exec. Throws EnvironmentError.
Pipe make_pipe();
void set_nonblocking(const UniqueFd& fd);  // for drain()

struct ExitStatus {
    bool exited = false;  // exited normally, with code
    int code = -1;
    int signal = 0;  // the signal that ended it

    bool success() const { return exited && code == 0; }
    std::string describe() const;  // "exit code 1", "killed by signal 11 (SEGV)"
};

enum class Output {
    inherit,  // ours
    pipe,     // a non-blocking pipe to us
    merge,    // stderr only: the same pipe as stdout
};

struct SpawnOptions {
    // Written to the child's stdin, which is then closed; without it stdin is /dev/null. Writing to a
    // child that already ended must not kill us, so spawning with input ignores SIGPIPE in this process.
    std::optional<std::string> input;
    Output stdout_mode = Output::pipe;
    Output stderr_mode = Output::pipe;
    // Descriptor `child` in the child is our `parent` (e.g. {3, trace_fd}); applied after stdio, so
    // {1, file} redirects stdout. Every other descriptor above 2 is closed in the child.
    struct FdMapping {
        int child = -1;
        int parent = -1;
    };
    std::vector<FdMapping> fds;
    bool new_process_group = false;  // so signal_group() reaches what the child starts
    // SIGKILL when the thread that spawned it ends (PR_SET_PDEATHSIG): no orphan outlives a killed parent.
    bool kill_with_parent = false;
    // Pinned before exec: the CPUs the child may run on (sched_setaffinity), empty: ours; a set the kernel refuses
    // ends the child with exit code 127, saying why. The memory node its pages prefer (set_mempolicy
    // MPOL_PREFERRED), unset: the kernel's default; refused, it is said on stderr and the child runs on.
    std::vector<int> cpu_affinity;
    std::optional<int> memory_node;
    std::filesystem::path cwd;     // empty: ours
    std::vector<std::string> env;  // "NAME=value", added to (or replacing in) our environment
};

class Child {
public:
    Child(Child&& other) noexcept;
    Child& operator=(Child&&) = delete;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    // Kills the child (its group, with new_process_group) if it was not reaped, and reaps it.
    ~Child();

    pid_t pid() const { return pid_; }
    std::int64_t started_ns() const { return started_ns_; }
    UniqueFd& stdout_pipe() { return stdout_; }  // closed (false) when not a pipe or at end of file
    UniqueFd& stderr_pipe() { return stderr_; }

    void signal(int signal_number) const;        // the child alone; nothing once reaped
    void signal_group(int signal_number) const;  // its process group (the child alone without one)
    // The status once the child ended, else nothing; never blocks. With new_process_group, whatever the
    // child left in its group is killed before the child is reaped, while the group id cannot be reused.
    std::optional<ExitStatus> try_wait();
    ExitStatus wait();  // blocks

private:
    friend Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options);
    Child() = default;

    pid_t pid_ = -1;
    bool own_group_ = false;
    bool reaped_ = false;
    ExitStatus status_;
    std::int64_t started_ns_ = 0;
    UniqueFd stdout_;
    UniqueFd stderr_;
};

// Starts argv; argv[0] without a '/' is looked up on PATH. A program that cannot be started exits
// with code 127 after saying why on its stderr. Throws EnvironmentError when fork or pipe fail.
Child spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

// The executable `name` on PATH (a name with a '/' is taken as it is, if executable), or nothing.
std::optional<std::filesystem::path> find_program(const std::string& name);

// Hands what a non-blocking `fd` holds now to `sink`; at end of file closes it. Returns whether it is
// still open. A closed fd is left alone.
bool drain(UniqueFd& fd, const std::function<void(std::string_view)>& sink);
// Waits up to timeout_ms until one of the open descriptors (-1: ignored) can be read or hung up.
void wait_readable(std::initializer_list<int> fds, int timeout_ms);

// A short-lived tool run to completion with its output captured (gnuplot, nvidia-smi queries).
struct CapturedRun {
    ExitStatus status;
    bool timed_out = false;  // killed (with its process group) after timeout_ms
    std::string out;
    std::string err;
};
// Starts argv in a process group of its own, feeds it `input` (if any), collects both streams and
// waits; past timeout_ms (0: no limit) the group is killed. Throws EnvironmentError when it cannot fork.
CapturedRun run_captured(const std::vector<std::string>& argv, std::optional<std::string> input = std::nullopt,
                         int timeout_ms = 0);

// The last bytes of a stream, e.g. a child's output for an error message.
class TailBuffer {
public:
    explicit TailBuffer(std::size_t keep_bytes) : keep_(keep_bytes) {}
    void append(std::string_view data);
    std::string text() const;  // at most keep_bytes, terminal control sequences (colours) taken out
    // The last `max_lines` non-blank lines, each longer than line_bytes cut at a word and marked "...",
    // joined with `separator`.
    std::string last_lines(std::size_t max_lines, std::size_t line_bytes, std::string_view separator) const;

private:
    std::size_t keep_;
    std::string data_;
};

}  // namespace inferbench
