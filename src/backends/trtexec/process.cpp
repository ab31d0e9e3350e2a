#include "backends/trtexec/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"

extern char** environ;

namespace inferbench::trtexec {
namespace {

// posix_spawn's file actions, released however the spawn ends.
class SpawnActions {
public:
    explicit SpawnActions(const std::filesystem::path& output) {
        posix_spawn_file_actions_init(&actions_);
        posix_spawn_file_actions_addopen(&actions_, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&actions_, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&actions_, 1, 2);
    }
    SpawnActions(const SpawnActions&) = delete;
    SpawnActions& operator=(const SpawnActions&) = delete;
    ~SpawnActions() { posix_spawn_file_actions_destroy(&actions_); }
    const posix_spawn_file_actions_t* get() const { return &actions_; }

private:
    posix_spawn_file_actions_t actions_{};
};

pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& output) {
    if (argv.empty()) throw std::logic_error("run_process: empty argv");
    std::vector<char*> args;
    for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
    args.push_back(nullptr);
    const SpawnActions actions(output);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], actions.get(), nullptr, args.data(), environ);
    if (rc != 0) throw EnvironmentError(fmt::format("cannot run {}: {}", argv[0], std::strerror(rc)));
    return pid;
}

void record_status(ProcessResult& result, int status) {
    result.exited = WIFEXITED(status);
    result.exit_code = result.exited ? WEXITSTATUS(status) : -1;
    result.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

// Waits for the child; a stop request (or the timeout) escalates SIGINT -> SIGTERM -> SIGKILL, one
// grace period apart, so a tool that handles SIGINT can still write what it measured.
ProcessResult wait_for(pid_t pid, const ProcessOptions& options) {
    constexpr int kSignals[] = {SIGINT, SIGTERM, SIGKILL};
    const std::int64_t begin = monotonic_ns();
    std::size_t sent = 0;
    std::int64_t last_signal_ns = 0;
    ProcessResult result;
    while (true) {
        int status = 0;
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) {
            record_status(result, status);
            return result;
        }
        if (done < 0 && errno != EINTR) throw EnvironmentError(fmt::format("waitpid: {}", std::strerror(errno)));
        const std::int64_t now = monotonic_ns();
        const bool stop = (options.should_stop && options.should_stop()) ||
                          (options.timeout_ns > 0 && now - begin >= options.timeout_ns);
        if (sent < std::size(kSignals) && (sent == 0 ? stop : now - last_signal_ns >= options.stop_grace_ns)) {
            kill(pid, kSignals[sent++]);
            last_signal_ns = now;
            result.stopped = true;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace

std::string ProcessResult::describe() const {
    if (exited) return fmt::format("exited with code {}", exit_code);
    return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
}

ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& output,
                          const ProcessOptions& options) {
    return wait_for(spawn(argv, output), options);
}

std::optional<std::string> capture_output(const std::vector<std::string>& argv, std::int64_t timeout_ns,
                                          bool require_success) {
    std::string path = (std::filesystem::temp_directory_path() / "inferbench-capture-XXXXXX").string();
    const int fd = mkstemp(path.data());
    if (fd < 0) return std::nullopt;
    close(fd);
    std::optional<std::string> text;
    try {
        ProcessOptions options;
        options.timeout_ns = timeout_ns;
        options.stop_grace_ns = 500'000'000;
        const ProcessResult result = run_process(argv, path, options);
        if (result.exited && !result.stopped && (result.ok() || !require_success)) text = read_text_file(path);
    } catch (const EnvironmentError&) {
        // Not installed: the caller falls back to another source.
    }
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
    return text;
}

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "";
    while (!rest.empty()) {
        const auto colon = rest.find(':');
        const std::filesystem::path dir(rest.substr(0, colon));
        if (!dir.empty() && access((dir / name).c_str(), X_OK) == 0) return dir / name;
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    return std::nullopt;
}

std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace inferbench::trtexec
