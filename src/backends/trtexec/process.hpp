// Runs an external program (trtexec, nvidia-smi) with core/subprocess.hpp, its output into a file, and
// waits for it, polling a stop request. The child stays in the caller's process group, so when the
// orchestrator kills a worker's group on timeout, the tool goes with it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace inferbench::trtexec {

struct ProcessResult {
    bool exited = false;  // exited normally, with exit_code
    int exit_code = -1;
    int signal = 0;       // the signal that ended it
    bool stopped = false; // ended because should_stop asked for it, or for the timeout

    bool ok() const { return exited && exit_code == 0; }
    std::string describe() const;  // "exited with code 1", "killed by signal 9"
};

struct ProcessOptions {
    std::function<bool()> should_stop;  // polled every 20 ms: SIGINT, then SIGTERM, then SIGKILL
    std::int64_t timeout_ns = 0;        // 0: none; reaching it stops the process the same way
    std::int64_t stop_grace_ns = 2'000'000'000;  // between the signals
};

// argv[0] is a path or a name looked up on PATH. stdout and stderr go to `output` (truncated);
// stdin is /dev/null. Throws EnvironmentError when the program cannot be started.
ProcessResult run_process(const std::vector<std::string>& argv, const std::filesystem::path& output,
                          const ProcessOptions& options = {});

// Runs argv for at most timeout_ns and returns what it printed; nothing when it cannot start, is
// stopped, or (with require_success) exits with another code than 0.
std::optional<std::string> capture_output(const std::vector<std::string>& argv, std::int64_t timeout_ns,
                                          bool require_success = true);

std::string read_text_file(const std::filesystem::path& path);

}  // namespace inferbench::trtexec
