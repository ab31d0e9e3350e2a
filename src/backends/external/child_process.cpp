#include "backends/external/child_process.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/process/supervise.hpp"

namespace inferbench::external {
namespace {

constexpr std::size_t kStderrKeepBytes = 16384;
constexpr std::size_t kMaxLineBytes = 16U << 20U;  // a runner that never ends a line is broken
constexpr std::size_t kTailLineBytes = 300;

Child start_runner(const std::vector<std::string>& argv, const std::string& input, int command_fd,
                   UniqueFd& commands) {
    SpawnOptions options;
    Pipe pipe;
    if (command_fd >= 0) {
        pipe = make_pipe();
        options.fds.push_back({command_fd, pipe.read.get()});
        commands = std::move(pipe.write);
    }
    options.input = input;  // requests are far below a pipe's 64 KiB: writing cannot block for long
    options.new_process_group = true;
    options.kill_with_parent = true;
    return spawn(argv, options);
}

}  // namespace

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::string& input, bool forward_stderr,
                           int command_fd)
    : child_(start_runner(argv, input, command_fd, commands_)),
      forward_stderr_(forward_stderr),
      stderr_tail_(kStderrKeepBytes) {}

void ChildProcess::send_command(std::string_view line) {
    std::string text(line);
    text += '\n';
    std::string_view rest = text;
    while (!rest.empty()) {
        // SIGPIPE is ignored once a child was spawned with input: a child that ended gives EPIPE here.
        const ssize_t put = commands_ ? ::write(commands_.get(), rest.data(), rest.size()) : -1;
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) throw EnvironmentError(fmt::format("cannot send the runner a command: {}",
                                                         commands_ ? errno_text(errno) : "it has no command channel"));
        rest.remove_prefix(static_cast<std::size_t>(put));
    }
}

void ChildProcess::drain_stderr() {
    drain(child_.stderr_pipe(), [&](std::string_view data) {
        if (forward_stderr_) {
            const ssize_t ignored = write(2, data.data(), data.size());  // our own output: best effort
            (void)ignored;
        }
        stderr_tail_.append(data);
    });
}

bool ChildProcess::drain_stdout() {
    return drain(child_.stdout_pipe(), [&](std::string_view data) {
        stdout_pending_.append(data);
        if (stdout_pending_.size() > kMaxLineBytes && stdout_pending_.find('\n') == std::string::npos)
            throw std::runtime_error("the runner printed 16 MiB on stdout without ending a line");
    });
}

bool ChildProcess::read_lines(int timeout_ms, std::vector<std::string>& lines) {
    if (child_.stdout_pipe()) wait_readable({child_.stdout_pipe().get(), child_.stderr_pipe().get()}, timeout_ms);
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

void ChildProcess::kill_group() const { child_.signal_group(SIGKILL); }

ExitStatus ChildProcess::wait(std::int64_t timeout_ns, bool* timed_out) {
    StopPolicy policy;
    policy.timeout_ns = std::max<std::int64_t>(timeout_ns, 1);  // 0 here means now, not never
    policy.whole_group = true;
    // Keep reading: a runner blocked on a full pipe would otherwise never end.
    const Supervised supervised = supervise(child_, policy, [this](int wait_ms) {
        wait_readable({child_.stderr_pipe().get(), child_.stdout_pipe().get()}, wait_ms);
        drain_stderr();
        drain_stdout();
    });
    drain_stderr();
    if (timed_out) *timed_out = supervised.timed_out;
    return supervised.status;
}

std::string ChildProcess::stderr_tail(std::size_t max_lines) const {
    return stderr_tail_.last_lines(max_lines, kTailLineBytes, " | ");
}

}  // namespace inferbench::external
