#include "core/supervise.hpp"

#include <fcntl.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

constexpr int kPollMs = 20;

void send(const Child& child, const StopPolicy& policy, int signal_number) {
    if (policy.whole_group)
        child.signal_group(signal_number);
    else
        child.signal(signal_number);
}

}  // namespace

Supervised supervise(Child& child, const StopPolicy& policy, const std::function<void(int wait_ms)>& between) {
    const std::int64_t start_ns = monotonic_ns();
    Supervised result;
    std::size_t sent = 0;
    std::int64_t last_signal_ns = 0;
    while (true) {
        if (const auto status = child.try_wait()) {
            result.status = *status;
            return result;
        }
        const std::int64_t now = monotonic_ns();
        if (!result.stopped) {
            result.timed_out = policy.timeout_ns > 0 && now - start_ns >= policy.timeout_ns;
            result.stopped = result.timed_out || (policy.should_stop && policy.should_stop());
        }
        const bool signal_due =
            result.stopped && sent < policy.signals.size() && (sent == 0 || now - last_signal_ns >= policy.grace_ns);
        if (signal_due) {
            send(child, policy, policy.signals[sent++]);
            last_signal_ns = now;
        }
        if (between)
            between(kPollMs);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    }
}

Supervised run_logged(const std::vector<std::string>& argv, const std::filesystem::path& log,
                      const StopPolicy& policy) {
    if (argv.empty()) throw std::logic_error("run_logged: empty argv");
    if (!find_program(argv[0]))
        throw EnvironmentError(fmt::format("cannot run {}: not found or not executable", argv[0]));
    const UniqueFd file(open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!file) throw EnvironmentError(fmt::format("cannot write {}: {}", log.string(), std::strerror(errno)));
    SpawnOptions options;
    options.stdout_mode = Output::inherit;
    options.stderr_mode = Output::inherit;
    options.fds = {{1, file.get()}, {2, file.get()}};
    options.kill_with_parent = true;
    Child child = spawn(argv, options);
    return supervise(child, policy);
}

}  // namespace inferbench
