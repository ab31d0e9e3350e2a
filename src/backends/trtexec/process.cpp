#include "backends/trtexec/process.hpp"

#include <fcntl.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/subprocess.hpp"

namespace inferbench::trtexec {
namespace {

Child start(const std::vector<std::string>& argv, const std::filesystem::path& output) {
    if (argv.empty()) throw std::logic_error("run_process: empty argv");
    if (!find_program(argv[0])) throw EnvironmentError(fmt::format("cannot run {}: not found or not executable", argv[0]));
    const UniqueFd file(open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!file) throw EnvironmentError(fmt::format("cannot write {}: {}", output.string(), std::strerror(errno)));
    SpawnOptions options;
    options.stdout_mode = Output::inherit;
    options.stderr_mode = Output::inherit;
    options.fds = {{1, file.get()}, {2, file.get()}};
    options.kill_with_parent = true;  // a worker killed with SIGKILL cannot end its group itself
    return spawn(argv, options);
}

// Waits for the child; a stop request (or the timeout) escalates SIGINT -> SIGTERM -> SIGKILL, one
// grace period apart, so a tool that handles SIGINT can still write what it measured.
ProcessResult wait_for(Child& child, const ProcessOptions& options) {
    constexpr int kSignals[] = {SIGINT, SIGTERM, SIGKILL};
    std::size_t sent = 0;
    std::int64_t last_signal_ns = 0;
    ProcessResult result;
    while (true) {
        if (const auto status = child.try_wait()) {
            result.exited = status->exited;
            result.exit_code = status->code;
            result.signal = status->signal;
            return result;
        }
        const std::int64_t now = monotonic_ns();
        const bool stop = (options.should_stop && options.should_stop()) ||
                          (options.timeout_ns > 0 && now - child.started_ns() >= options.timeout_ns);
        if (sent < std::size(kSignals) && (sent == 0 ? stop : now - last_signal_ns >= options.stop_grace_ns)) {
            child.signal(kSignals[sent++]);
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
    Child child = start(argv, output);
    return wait_for(child, options);
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

std::string read_text_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

}  // namespace inferbench::trtexec
