#include "runner/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

constexpr std::size_t kTailBytes = 4096;
constexpr int kPollMs = 100;
constexpr std::int64_t kTickNs = 500'000'000;

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

// Child side, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_child(const WorkerLaunch& launch, char* const* argv, Pipe in, Pipe out, Pipe events) {
    setpgid(0, 0);
    // Move sources above the target range first so no dup2 overwrites a source still needed.
    const int src_in = fcntl(in.read, F_DUPFD, 10);
    const int src_out = fcntl(out.write, F_DUPFD, 10);
    const int src_trace = fcntl(launch.trace_fd, F_DUPFD, 10);
    const int src_events = fcntl(events.write, F_DUPFD, 10);
    if (src_in < 0 || src_out < 0 || src_trace < 0 || src_events < 0) _exit(127);
    dup2(src_in, 0);
    dup2(src_out, 1);
    dup2(src_out, 2);
    dup2(src_trace, 3);
    dup2(src_events, 4);
    for (int fd = 5; fd < 1024; ++fd) close(fd);
    execv(launch.executable.c_str(), argv);
    const char message[] = "inferbench: cannot start the worker executable\n";
    ssize_t ignored = write(2, message, sizeof(message) - 1);
    (void)ignored;
    _exit(127);
}

// The OOM-kill counter of our cgroup (cgroup v2), to tell an OOM kill from another SIGKILL.
long oom_kill_count() {
    std::ifstream cgroup("/proc/self/cgroup");
    std::string line;
    std::string path;
    while (std::getline(cgroup, line)) {
        if (line.starts_with("0::")) path = line.substr(3);
    }
    std::ifstream events("/sys/fs/cgroup" + path + "/memory.events");
    std::string key;
    long value = 0;
    while (events >> key >> value) {
        if (key == "oom_kill") return value;
    }
    return -1;
}

class OutputCollector {
public:
    void add_output(const char* data, std::size_t n) {
        tail_.append(data, n);
        if (tail_.size() > 2 * kTailBytes) tail_.erase(0, tail_.size() - kTailBytes);
    }
    void add_events(const char* data, std::size_t n, std::vector<nlohmann::json>& out) {
        pending_.append(data, n);
        std::size_t newline;
        while ((newline = pending_.find('\n')) != std::string::npos) {
            auto event = nlohmann::json::parse(pending_.substr(0, newline), nullptr, false);
            if (!event.is_discarded()) out.push_back(std::move(event));
            pending_.erase(0, newline + 1);
        }
    }
    std::string tail() const {
        std::string t = tail_.size() > kTailBytes ? tail_.substr(tail_.size() - kTailBytes) : tail_;
        while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
        return t;
    }

private:
    std::string tail_;
    std::string pending_;
};

// Reads what is available; returns false at end of file.
bool drain(int fd, const std::function<void(const char*, std::size_t)>& sink) {
    char buffer[8192];
    while (true) {
        const ssize_t n = read(fd, buffer, sizeof(buffer));
        if (n > 0) {
            sink(buffer, static_cast<std::size_t>(n));
            continue;
        }
        if (n == 0) return false;
        return errno == EAGAIN || errno == EINTR;
    }
}

void write_all(int fd, const std::string& data) {
    std::size_t written = 0;
    while (written < data.size()) {
        const ssize_t n = write(fd, data.data() + written, data.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the worker died before reading; its ending tells why
        written += static_cast<std::size_t>(n);
    }
}

std::vector<char*> make_argv(const WorkerLaunch& launch, std::vector<std::string>& storage) {
    storage.clear();
    storage.push_back(launch.executable.string());
    storage.insert(storage.end(), launch.arguments.begin(), launch.arguments.end());
    std::vector<char*> argv;
    for (auto& s : storage) argv.push_back(s.data());
    argv.push_back(nullptr);
    return argv;
}

}  // namespace

const nlohmann::json* WorkerOutcome::find_event(std::string_view name) const {
    for (const auto& event : events) {
        if (event.value("event", "") == name) return &event;
    }
    return nullptr;
}

std::string WorkerOutcome::describe_ending() const {
    if (timed_out) return fmt::format("timed out after {}; the worker and its children were killed", format_duration(timeout_ns));
    if (signal != 0) {
        std::string text = fmt::format("killed by signal {} ({})", signal, sigabbrev_np(signal) ? sigabbrev_np(signal) : "?");
        if (signal == SIGKILL && oom_killed) text += " from the kernel's OOM killer: out of memory";
        return text;
    }
    if (exited && exit_code == 127) return "the worker could not be started (exit code 127)";
    return fmt::format("exited with code {}", exit_code);
}

WorkerOutcome run_worker(const WorkerLaunch& launch, const SuperviseHooks& hooks) {
    std::vector<std::string> argv_storage;
    std::vector<char*> argv = make_argv(launch, argv_storage);
    Pipe in = make_pipe(), out = make_pipe(), events = make_pipe();
    const long oom_before = oom_kill_count();
    const std::int64_t begin = monotonic_ns();
    const pid_t pid = fork();
    if (pid < 0) throw EnvironmentError(fmt::format("fork failed: {}", std::strerror(errno)));
    if (pid == 0) exec_child(launch, argv.data(), in, out, events);
    setpgid(pid, pid);  // also done by the child; whichever runs first wins the race harmlessly
    close_fd(in.read);
    close_fd(out.write);
    close_fd(events.write);
    signal(SIGPIPE, SIG_IGN);
    write_all(in.write, launch.request);
    close_fd(in.write);
    fcntl(out.read, F_SETFL, O_NONBLOCK);
    fcntl(events.read, F_SETFL, O_NONBLOCK);

    WorkerOutcome outcome;
    outcome.timeout_ns = launch.timeout_ns;
    OutputCollector collector;
    const auto on_output = [&](const char* d, std::size_t n) { collector.add_output(d, n); };
    const auto on_events = [&](const char* d, std::size_t n) { collector.add_events(d, n, outcome.events); };
    const std::int64_t deadline = launch.timeout_ns > 0 ? begin + launch.timeout_ns : INT64_MAX;
    std::int64_t kill_at = INT64_MAX;
    std::int64_t next_tick = begin + kTickNs;
    int status = 0;
    while (true) {
        pollfd fds[2] = {{out.read, POLLIN, 0}, {events.read, POLLIN, 0}};
        poll(fds, 2, kPollMs);
        if (out.read >= 0 && !drain(out.read, on_output)) close_fd(out.read);
        if (events.read >= 0 && !drain(events.read, on_events)) close_fd(events.read);
        if (waitpid(pid, &status, WNOHANG) == pid) break;
        const std::int64_t now = monotonic_ns();
        if (now >= deadline && !outcome.timed_out) {
            outcome.timed_out = true;
            kill(-pid, SIGKILL);
        }
        if (!outcome.stop_requested && hooks.interrupted && hooks.interrupted()) {
            outcome.stop_requested = true;
            if (hooks.request_stop) hooks.request_stop();
            kill_at = now + hooks.stop_grace_ns;
        }
        if (now >= kill_at) kill(-pid, SIGKILL);
        if (now >= next_tick && hooks.on_tick) {
            hooks.on_tick();
            next_tick = now + kTickNs;
        }
    }
    kill(-pid, SIGKILL);  // whatever the worker started dies with it
    if (out.read >= 0) drain(out.read, on_output);
    if (events.read >= 0) drain(events.read, on_events);
    close_fd(out.read);
    close_fd(events.read);
    outcome.wall_ns = monotonic_ns() - begin;
    outcome.exited = WIFEXITED(status);
    outcome.exit_code = outcome.exited ? WEXITSTATUS(status) : -1;
    outcome.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    outcome.oom_killed = oom_before >= 0 && oom_kill_count() > oom_before;
    outcome.output_tail = collector.tail();
    return outcome;
}

}  // namespace inferbench
