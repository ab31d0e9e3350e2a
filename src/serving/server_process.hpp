// A server a serving cell starts for itself (the openai backend's server_command): started on 127.0.0.1 on
// a free port, in a process group of its own that dies with the worker, its output in a log file (a server
// that logs every request must never block on a full pipe), ready when its health path answers 200, asked
// what it is, and stopped (SIGTERM to its group, SIGKILL after a grace period) when the cell ends.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "core/process/subprocess.hpp"

namespace inferbench::serving {

// A TCP port on 127.0.0.1 that nothing listens on now (the kernel's choice for port 0).
int free_local_port();

// `command` with {NAME} replaced by values[NAME], each value quoted for the shell; a {NAME} without a value
// is a UserError naming it and the names there are.
std::string fill_command(const std::string& command, const std::map<std::string, std::string>& values);

class ServerProcess {
public:
    // Starts `command` through /bin/sh (so a plan can use the shell's quoting and variables), output to
    // `log_file`. Throws EnvironmentError when it cannot start.
    ServerProcess(std::string command, std::filesystem::path log_file);
    ServerProcess(ServerProcess&&) = delete;
    ~ServerProcess();  // stop()

    // Polls GET `url` until it answers 200, up to `timeout_ns`. Throws UserError with the log's last lines when
    // the server ends first or never answers.
    void wait_ready(const std::string& url, std::int64_t timeout_ns);
    // SIGTERM to its group, then SIGKILL after `grace_ns`; idempotent.
    void stop(std::int64_t grace_ns = 10'000'000'000);
    const std::string& command() const { return command_; }
    // The last lines of its output, for an error message.
    std::string log_tail() const;

private:
    std::string command_;
    std::filesystem::path log_file_;
    std::optional<Child> child_;
};

// What a server says it is: vLLM's GET /version, llama.cpp's GET /props build_info, else its Server header;
// empty when none of them says.
std::string server_version(const std::string& base_url, const std::string& api_key);

}  // namespace inferbench::serving
