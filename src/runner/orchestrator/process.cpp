#include "runner/orchestrator/process.hpp"

#include <signal.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/process/subprocess.hpp"
#include "core/process/supervise.hpp"
#include "core/units.hpp"

namespace inferbench::runner {
namespace {

constexpr std::size_t kTailBytes = 4096;
constexpr int kPollMs = 100;
constexpr int kEndingPollMs = 2;
constexpr std::int64_t kTickNs = 500'000'000;

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

// Complete lines of the events pipe, one event each. A line that is not an event can only come from a
// worker gone wrong, whose ending and output say more than the line would: it is left out.
class EventParser {
public:
    void add(std::string_view data, std::vector<worker_protocol::Event>& out) {
        pending_.append(data);
        std::size_t newline;
        while ((newline = pending_.find('\n')) != std::string::npos) {
            const auto json = nlohmann::json::parse(pending_.substr(0, newline), nullptr, false);
            if (!json.is_discarded()) {
                try {
                    out.push_back(worker_protocol::event_from_json(json));
                } catch (const worker_protocol::ProtocolError&) {
                }
            }
            pending_.erase(0, newline + 1);
        }
    }

private:
    std::string pending_;
};

// The worker's stdin carries the request, stdout and stderr one pipe, fd 3 the trace buffer and
// fd 4 the events pipe; it runs in a group of its own so that it dies with what it started, and it is
// killed when we die (PR_SET_PDEATHSIG): no worker runs on unsupervised after its orchestrator was
// killed. The signal follows the thread that forks, so run_worker must be called on a thread that
// lives as long as the worker does (the caller's, which waits for it here).
Child start_worker(const WorkerLaunch& launch, const UniqueFd& events_write) {
    std::vector<std::string> argv = {launch.executable.string()};
    argv.insert(argv.end(), launch.arguments.begin(), launch.arguments.end());
    SpawnOptions options;
    options.input = launch.request;
    options.stderr_mode = Output::merge;
    options.fds = {{worker_protocol::kTraceFd, launch.trace_fd}, {worker_protocol::kEventFd, events_write.get()}};
    options.new_process_group = true;
    options.kill_with_parent = true;
    options.cpu_affinity = launch.cpu_affinity;
    options.memory_node = launch.memory_node;
    return spawn(argv, options);
}

// What the worker writes, read as it comes: the last lines of its output, its events (each handed to
// on_event as it arrives), and the progress ticks in between.
class WorkerOutput {
public:
    WorkerOutput(Child& child, UniqueFd events, const SuperviseHooks& hooks, std::vector<worker_protocol::Event>& out)
        : child_(child),
          events_(std::move(events)),
          hooks_(hooks),
          out_(out),
          next_tick_(child.started_ns() + kTickNs) {
        set_nonblocking(events_);
    }

    // Between two looks at the worker: waits at most wait_ms for output, reads it, ticks when due.
    void wait_and_read(int wait_ms) {
        // Both pipes at end of file: the worker is ending, and poll would only sleep; look again soon.
        const bool any_open = child_.stdout_pipe() || events_;
        wait_readable({child_.stdout_pipe().get(), events_.get()}, any_open ? wait_ms : kEndingPollMs);
        read();
        if (const std::int64_t now = monotonic_ns(); now >= next_tick_ && hooks_.on_tick) {
            hooks_.on_tick();
            next_tick_ = now + kTickNs;
        }
    }

    void read() {
        drain(child_.stdout_pipe(), [this](std::string_view data) { tail_.append(data); });
        drain(events_, [this](std::string_view data) {
            const std::size_t before = out_.size();
            parser_.add(data, out_);
            if (hooks_.on_event)
                for (std::size_t i = before; i < out_.size(); ++i) hooks_.on_event(out_[i]);
        });
    }

    std::string tail() const {
        std::string text = tail_.text();
        while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
        return text;
    }

private:
    Child& child_;
    UniqueFd events_;
    const SuperviseHooks& hooks_;
    std::vector<worker_protocol::Event>& out_;
    TailBuffer tail_{kTailBytes};
    EventParser parser_;
    std::int64_t next_tick_;
};

// How the worker is stopped: Ctrl-C asks it (the trace buffer's flag) and kills its group one grace
// later; the timeout and a termination kill the group at once.
StopPolicy worker_stop_policy(const WorkerLaunch& launch, const SuperviseHooks& hooks, std::int64_t started_ns) {
    StopPolicy policy;
    policy.should_stop = hooks.interrupted;
    policy.kill_now = hooks.end_now;
    policy.ask = hooks.request_stop;
    policy.signals = {SIGKILL};
    policy.grace_ns = hooks.stop_grace_ns;
    policy.timeout_ns = launch.timeout_ns;
    policy.timeout_from_ns = started_ns;
    policy.timeout_kills = true;
    policy.whole_group = true;
    policy.poll_ms = kPollMs;
    return policy;
}

}  // namespace

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
    Pipe events = make_pipe();
    const long oom_before = oom_kill_count();
    Child child = start_worker(launch, events.write);
    events.write.reset();
    if (hooks.on_started) hooks.on_started(child.pid());
    WorkerOutcome outcome;
    outcome.timeout_ns = launch.timeout_ns;
    WorkerOutput output(child, std::move(events.read), hooks, outcome.events);
    const std::int64_t begin = child.started_ns();
    const Supervised supervised = supervise(child, worker_stop_policy(launch, hooks, begin),
                                            [&output](int wait_ms) { output.wait_and_read(wait_ms); });
    output.read();  // reaping killed whatever the worker left in its group; what it wrote is still in the pipes
    outcome.wall_ns = monotonic_ns() - begin;
    const ExitStatus& status = supervised.status;
    // The worker keeps its own deadline a little after ours (for when we were stopped and could not
    // act): a SIGKILL past the timeout is that deadline.
    outcome.timed_out = supervised.timed_out ||
                        (launch.timeout_ns > 0 && outcome.wall_ns >= launch.timeout_ns && status.signal == SIGKILL);
    outcome.stop_requested = supervised.stop_requested;
    outcome.exited = status.exited;
    outcome.exit_code = status.code;
    outcome.signal = status.signal;
    outcome.oom_killed = oom_before >= 0 && oom_kill_count() > oom_before;
    outcome.output_tail = output.tail();
    return outcome;
}

}  // namespace inferbench::runner
