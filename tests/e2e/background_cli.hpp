// The real CLI started in the background, to be signalled while it runs, and a look at the workers it
// started: each background CLI carries a tag in its environment, which its workers inherit, so that they
// can be found after their parent is gone.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "e2e/cli_harness.hpp"

extern char** environ;

namespace inferbench::testing {

// Polls `done` every 10 ms until it holds or `timeout` passed; returns whether it held.
inline bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return true;
}

// Whether process `/proc/PID` (given as that folder) runs: it exists and is not a zombie.
inline bool process_running(const std::string& proc_dir) {
    const std::string stat = read_file(proc_dir + "/stat");
    const auto close = stat.rfind(')');
    return close != std::string::npos && stat.compare(close + 2, 1, "Z") != 0;
}

// Live (not zombie) `__worker` processes whose environment carries `tag`.
inline std::vector<pid_t> tagged_workers(const std::string& tag) {
    const std::string marker = std::string("INFERBENCH_TEST_TAG=") + tag + '\0';
    std::vector<pid_t> found;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string dir = entry.path().string();
        const std::string cmdline = read_file(dir + "/cmdline");
        if (cmdline.find(std::string("\0__worker\0", 10)) == std::string::npos) continue;
        if (read_file(dir + "/environ").find(marker) == std::string::npos) continue;
        if (!process_running(dir)) continue;
        found.push_back(std::stoi(name));
    }
    return found;
}

inline std::string unique_tag() { return std::to_string(getpid()) + "-" + std::to_string(std::random_device{}()); }

class BackgroundCli {
public:
    // Runs inferbench `args` in `dir`, stdout and stderr into `name`.out / `name`.err there.
    BackgroundCli(const CliScratch& dir, const std::vector<std::string>& args, const std::string& tag,
                  const std::string& name = "background")
        : out_(dir.path() / (name + ".out")), err_(dir.path() / (name + ".err")) {
        std::vector<std::string> env;
        for (char** entry = environ; *entry; ++entry) env.emplace_back(*entry);
        env.push_back(std::string("INFERBENCH_BACKEND_PATH=") + INFERBENCH_TEST_BACKEND_DIR);
        env.push_back("XDG_CACHE_HOME=" + (dir.path() / "cache").string());
        env.push_back("INFERBENCH_TEST_TAG=" + tag);
        std::vector<std::string> argv = {INFERBENCH_EXE};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char*> c_argv, c_env;
        for (auto& arg : argv) c_argv.push_back(arg.data());
        c_argv.push_back(nullptr);
        for (auto& entry : env) c_env.push_back(entry.data());
        c_env.push_back(nullptr);
        const std::string cwd = dir.path().string();
        pid_ = fork();
        if (pid_ == 0) {
            if (chdir(cwd.c_str()) != 0 || !std::freopen(out_.c_str(), "w", stdout) ||
                !std::freopen(err_.c_str(), "w", stderr))
                _exit(126);
            execve(INFERBENCH_EXE, c_argv.data(), c_env.data());
            _exit(127);
        }
    }
    BackgroundCli(const BackgroundCli&) = delete;
    BackgroundCli& operator=(const BackgroundCli&) = delete;
    ~BackgroundCli() {
        if (pid_ > 0 && !waited_) {
            kill(pid_, SIGKILL);
            waitpid(pid_, nullptr, 0);
        }
    }

    pid_t pid() const { return pid_; }
    void signal(int signal_number) const { kill(pid_, signal_number); }
    // The raw wait status.
    int wait() {
        int status = 0;
        waitpid(pid_, &status, 0);
        waited_ = true;
        return status;
    }
    std::string err() const { return read_file(err_); }

private:
    pid_t pid_ = -1;
    bool waited_ = false;
    std::filesystem::path out_;
    std::filesystem::path err_;
};

}  // namespace inferbench::testing
