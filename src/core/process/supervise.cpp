#include "core/process/supervise.hpp"

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

// The stop's steps (`ask`, then each signal) as they come due, one grace apart; a kill ends them.
class StopSequence {
public:
    StopSequence(const Child& child, const StopPolicy& policy)
        : child_(child), policy_(policy), steps_((policy.ask ? 1 : 0) + policy.signals.size()) {}

    bool started() const { return started_ || killed_; }
    bool killed() const { return killed_; }
    void start() { started_ = true; }
    void kill() {
        send(SIGKILL);
        killed_ = true;
        next_ = steps_;
    }
    void advance(std::int64_t now) {
        if (!started_ || next_ >= steps_ || (next_ > 0 && now - last_step_ns_ < policy_.grace_ns)) return;
        if (policy_.ask && next_ == 0)
            policy_.ask();
        else
            send(policy_.signals[next_ - (policy_.ask ? 1 : 0)]);
        ++next_;
        last_step_ns_ = now;
    }

private:
    void send(int signal_number) const {
        if (policy_.whole_group)
            child_.signal_group(signal_number);
        else
            child_.signal(signal_number);
    }

    const Child& child_;
    const StopPolicy& policy_;
    std::size_t steps_;
    std::size_t next_ = 0;
    bool started_ = false;
    bool killed_ = false;
    std::int64_t last_step_ns_ = 0;
};

}  // namespace

Supervised supervise(Child& child, const StopPolicy& policy, const std::function<void(int wait_ms)>& between) {
    const std::int64_t timeout_from = policy.timeout_from_ns > 0 ? policy.timeout_from_ns : monotonic_ns();
    Supervised result;
    StopSequence stop(child, policy);
    const auto ended = [&] {
        const auto status = child.try_wait();
        if (!status) return false;
        result.status = *status;
        result.stopped = stop.started();
        return true;
    };
    while (true) {
        if (ended()) return result;
        const std::int64_t now = monotonic_ns();
        if (!result.timed_out && policy.timeout_ns > 0 && now - timeout_from >= policy.timeout_ns) {
            result.timed_out = true;
            if (policy.timeout_kills)
                stop.kill();
            else
                stop.start();
        }
        // A request that comes once the child has ended (between two looks at it) stops nothing.
        if (!result.stop_requested && policy.should_stop && policy.should_stop()) {
            if (ended()) return result;
            result.stop_requested = true;
            stop.start();
        }
        if (!stop.killed() && policy.kill_now && policy.kill_now()) {
            if (ended()) return result;
            result.stop_requested = true;
            stop.kill();
        }
        stop.advance(now);
        if (between)
            between(policy.poll_ms);
        else
            std::this_thread::sleep_for(std::chrono::milliseconds(policy.poll_ms));
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
