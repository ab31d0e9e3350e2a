#include "backends/external/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench::external {
namespace {

constexpr std::size_t kStderrKeepBytes = 16384;
constexpr std::size_t kMaxLineBytes = 16U << 20U;  // a runner that never ends a line is broken
constexpr std::size_t kTailLineBytes = 300;
constexpr int kWaitPollMs = 20;

struct Pipe {
    int read = -1;
    int write = -1;
};

Pipe make_pipe() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw EnvironmentError(fmt::format("pipe failed: {}", std::strerror(errno)));
    return {fds[0], fds[1]};
}

void close_fd(int& fd) {
    if (fd >= 0) close(fd);
    fd = -1;
}

// Looked up before fork: between fork and exec only async-signal-safe calls are allowed.
std::string find_program(const std::string& name) {
    if (name.find('/') != std::string::npos) return name;
    const char* path = std::getenv("PATH");
    std::string_view rest = path && *path ? path : "/usr/local/bin:/usr/bin:/bin";
    while (true) {
        const auto colon = rest.find(':');
        std::string candidate = fmt::format("{}/{}", rest.substr(0, colon), name);
        if (access(candidate.c_str(), X_OK) == 0) return candidate;
        if (colon == std::string_view::npos) return name;  // exec fails: exit 127 with the reason
        rest.remove_prefix(colon + 1);
    }
}

// Child side, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(const char* program, char* const* argv, Pipe in, Pipe out, Pipe err, pid_t parent) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the parent died before prctl took effect
    signal(SIGPIPE, SIG_DFL);             // we ignore it; the runner should not inherit that
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // Move sources above the target range first so no dup2 overwrites a source still needed.
    const int src_in = fcntl(in.read, F_DUPFD, 10);
    const int src_out = fcntl(out.write, F_DUPFD, 10);
    const int src_err = fcntl(err.write, F_DUPFD, 10);
    if (src_in < 0 || src_out < 0 || src_err < 0) _exit(127);
    dup2(src_in, 0);
    dup2(src_out, 1);
    dup2(src_err, 2);
    close_range(3, ~0U, 0);  // the worker's trace buffer and event pipe stay with the worker
    execv(program, argv);
    const char message[] = "inferbench: cannot start the runner program ";
    ssize_t ignored = write(2, message, sizeof(message) - 1);
    ignored = write(2, program, std::strlen(program));
    ignored = write(2, "\n", 1);
    (void)ignored;
    _exit(127);
}

void write_all(int fd, const std::string& data) {
    std::size_t written = 0;
    while (written < data.size()) {
        const ssize_t n = write(fd, data.data() + written, data.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the runner ended before reading; how it ended tells why
        written += static_cast<std::size_t>(n);
    }
}

}  // namespace

std::string ExitStatus::describe() const {
    if (exited) return fmt::format("exit code {}", code);
    const char* abbrev = sigabbrev_np(signal);
    return fmt::format("killed by signal {} ({})", signal, abbrev ? abbrev : "?");
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& input, bool forward_stderr)
    : forward_stderr_(forward_stderr) {
    if (argv.empty()) throw std::logic_error("ChildProcess needs a program");
    const std::string program = find_program(argv[0]);
    std::vector<std::string> storage = argv;
    std::vector<char*> c_argv;
    c_argv.reserve(storage.size() + 1);
    for (auto& arg : storage) c_argv.push_back(arg.data());
    c_argv.push_back(nullptr);
    Pipe in = make_pipe(), out = make_pipe(), err = make_pipe();
    // Writing the request to a runner that already died must fail with EPIPE, not kill us.
    signal(SIGPIPE, SIG_IGN);
    const pid_t parent = getpid();
    started_ns_ = monotonic_ns();
    pid_ = fork();
    if (pid_ < 0) throw EnvironmentError(fmt::format("fork failed: {}", std::strerror(errno)));
    if (pid_ == 0) exec_child(program.c_str(), c_argv.data(), in, out, err, parent);
    setpgid(pid_, pid_);  // also done by the child; whichever runs first wins the race harmlessly
    close_fd(in.read);
    close_fd(out.write);
    close_fd(err.write);
    write_all(in.write, input);  // requests are far below a pipe's 64 KiB: this cannot block for long
    close_fd(in.write);
    stdout_fd_ = out.read;
    stderr_fd_ = err.read;
    fcntl(stdout_fd_, F_SETFL, O_NONBLOCK);
    fcntl(stderr_fd_, F_SETFL, O_NONBLOCK);
}

ChildProcess::~ChildProcess() {
    if (!reaped_ && pid_ > 0) {
        kill(-pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
    }
    close_fd(stdout_fd_);
    close_fd(stderr_fd_);
}

void ChildProcess::drain_stderr() {
    char buffer[8192];
    while (stderr_fd_ >= 0) {
        const ssize_t n = read(stderr_fd_, buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return;  // EAGAIN: nothing more for now
        if (n == 0) {
            close_fd(stderr_fd_);
            return;
        }
        const auto size = static_cast<std::size_t>(n);
        if (forward_stderr_) {
            const ssize_t ignored = write(2, buffer, size);  // our own output: best effort
            (void)ignored;
        }
        stderr_tail_.append(buffer, size);
        if (stderr_tail_.size() > 2 * kStderrKeepBytes) stderr_tail_.erase(0, stderr_tail_.size() - kStderrKeepBytes);
    }
}

bool ChildProcess::drain_stdout() {
    char buffer[65536];
    while (stdout_fd_ >= 0) {
        const ssize_t n = read(stdout_fd_, buffer, sizeof(buffer));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return true;
        if (n == 0) {
            close_fd(stdout_fd_);
            return false;
        }
        stdout_pending_.append(buffer, static_cast<std::size_t>(n));
        if (stdout_pending_.size() > kMaxLineBytes && stdout_pending_.find('\n') == std::string::npos)
            throw std::runtime_error("the runner printed 16 MiB on stdout without ending a line");
    }
    return false;
}

bool ChildProcess::read_lines(int timeout_ms, std::vector<std::string>& lines) {
    if (stdout_fd_ >= 0) {
        pollfd fds[2] = {{stdout_fd_, POLLIN, 0}, {stderr_fd_, POLLIN, 0}};
        poll(fds, stderr_fd_ >= 0 ? 2 : 1, timeout_ms);
    }
    drain_stderr();
    const bool open = drain_stdout();
    std::size_t begin = 0;
    for (std::size_t newline; (newline = stdout_pending_.find('\n', begin)) != std::string::npos; begin = newline + 1) {
        std::string_view line(stdout_pending_.data() + begin, newline - begin);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.emplace_back(line);
    }
    stdout_pending_.erase(0, begin);
    if (!open && !stdout_pending_.empty()) lines.push_back(std::exchange(stdout_pending_, {}));
    return open;
}

void ChildProcess::send_signal(int signal_number) const {
    if (!reaped_) kill(pid_, signal_number);
}

void ChildProcess::kill_group() {
    if (!reaped_) kill(-pid_, SIGKILL);
}

std::optional<ExitStatus> ChildProcess::poll_exit() {
    if (reaped_) return status_;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid != pid_)
        return std::nullopt;
    // The runner is a zombie, so its process group id cannot be reused yet: end what it left behind.
    kill(-pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    status_.exited = WIFEXITED(status);
    status_.code = status_.exited ? WEXITSTATUS(status) : -1;
    status_.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    return status_;
}

ExitStatus ChildProcess::wait(std::int64_t timeout_ns) {
    const std::int64_t deadline = monotonic_ns() + timeout_ns;
    bool killed = false;
    while (true) {
        if (auto status = poll_exit()) {
            drain_stderr();
            return *status;
        }
        if (!killed && monotonic_ns() >= deadline) {
            kill_group();
            killed = true;
        }
        // Keep reading: a runner blocked on a full pipe would otherwise never end.
        pollfd fds[2] = {{stderr_fd_, POLLIN, 0}, {stdout_fd_, POLLIN, 0}};
        poll(fds, 2, kWaitPollMs);
        drain_stderr();
        drain_stdout();
    }
}

std::string ChildProcess::stderr_tail(std::size_t max_lines) const {
    std::vector<std::string> tail;
    std::size_t end = stderr_tail_.size();
    while (end > 0 && tail.size() < max_lines) {
        const auto newline = stderr_tail_.rfind('\n', end - 1);
        const std::size_t begin = newline == std::string::npos ? 0 : newline + 1;
        std::string line = stderr_tail_.substr(begin, end - begin);
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            tail.insert(tail.begin(), line.substr(0, kTailLineBytes));
        if (newline == std::string::npos) break;
        end = newline;
    }
    return join(tail, " | ");
}

}  // namespace inferbench::external
