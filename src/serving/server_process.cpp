#include "serving/server_process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "serving/http_get.hpp"

namespace inferbench::serving {
namespace {

std::string shell_quote(const std::string& value) {
    std::string quoted = "'";
    for (const char c : value) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

constexpr std::int64_t kPollNs = 100'000'000;

}  // namespace

int free_local_port() {
    const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd) throw EnvironmentError("cannot open a socket to find a free port");
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    address.sin_port = 0;
    socklen_t length = sizeof address;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&address), &length) != 0)
        throw EnvironmentError("cannot bind 127.0.0.1 to find a free port");
    return ntohs(address.sin_port);
}

std::string fill_command(const std::string& command, const std::map<std::string, std::string>& values) {
    std::string filled;
    std::size_t at = 0;
    while (at < command.size()) {
        const std::size_t open = command.find('{', at);
        if (open == std::string::npos) break;
        const std::size_t close = command.find('}', open);
        if (close == std::string::npos) break;
        const std::string name = command.substr(open + 1, close - open - 1);
        filled += command.substr(at, open - at);
        const auto it = values.find(name);
        if (it == values.end()) {
            std::string known;
            for (const auto& [key, value] : values) known += (known.empty() ? "" : ", ") + ("{" + key + "}");
            throw UserError(fmt::format("server_command: no value for {{{}}}; it may use {}", name, known));
        }
        filled += shell_quote(it->second);
        at = close + 1;
    }
    return filled + command.substr(at);
}

ServerProcess::ServerProcess(std::string command, std::filesystem::path log_file)
    : command_(std::move(command)), log_file_(std::move(log_file)) {
    const UniqueFd log(::open(log_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!log) throw EnvironmentError(fmt::format("cannot write the server's log {}", log_file_.string()));
    SpawnOptions options;
    options.stdout_mode = Output::inherit;
    options.stderr_mode = Output::inherit;
    options.fds = {{1, log.get()}, {2, log.get()}};
    options.new_process_group = true;
    options.kill_with_parent = true;
    child_.emplace(spawn({"/bin/sh", "-c", "exec " + command_}, options));
}

ServerProcess::~ServerProcess() { stop(); }

std::string ServerProcess::log_tail() const {
    std::ifstream in(log_file_);
    std::stringstream text;
    text << in.rdbuf();
    TailBuffer tail(4096);
    tail.append(text.str());
    return tail.last_lines(3, 200, " | ");
}

void ServerProcess::wait_ready(const std::string& url, std::int64_t timeout_ns) {
    const std::int64_t deadline = monotonic_ns() + timeout_ns;
    std::string last;
    while (monotonic_ns() < deadline) {
        if (const auto status = child_->try_wait())
            throw UserError(fmt::format("server_command ended ({}) before {} answered: {}", status->describe(), url,
                                        log_tail()));
        const HttpAnswer answer = http_get(url, 2'000'000'000);
        if (answer.status == 200) return;
        last = answer.status ? fmt::format("HTTP {}", answer.status) : answer.error;
        std::this_thread::sleep_for(std::chrono::nanoseconds(kPollNs));
    }
    throw UserError(fmt::format("server_command: {} did not answer 200 within {} s (last: {}); raise "
                                "server_ready_timeout or check the command: {}",
                                url, timeout_ns / 1'000'000'000, last, log_tail()));
}

void ServerProcess::stop(std::int64_t grace_ns) {
    if (!child_ || child_->try_wait()) return;
    child_->signal_group(SIGTERM);
    const std::int64_t deadline = monotonic_ns() + grace_ns;
    while (monotonic_ns() < deadline) {
        if (child_->try_wait()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    child_->signal_group(SIGKILL);
    child_->wait();
}

std::string server_version(const std::string& base_url, const std::string& api_key) {
    constexpr std::int64_t kTimeoutNs = 5'000'000'000;
    const auto json_field = [&](const std::string& path, const char* key) -> std::string {
        const HttpAnswer answer = http_get(base_url + path, kTimeoutNs, api_key);
        if (answer.status != 200) return {};
        const auto body = nlohmann::json::parse(answer.body, nullptr, false);
        if (!body.is_object() || !body.contains(key) || !body[key].is_string()) return {};
        return body[key].get<std::string>();
    };
    if (std::string version = json_field("/version", "version"); !version.empty()) return version;
    if (std::string build = json_field("/props", "build_info"); !build.empty()) return "llama.cpp " + build;
    return http_get(base_url + "/v1/models", kTimeoutNs, api_key).server;
}

}  // namespace inferbench::serving
