// The one supervisor of a child process (core/process/subprocess.hpp): it waits for the child to end, and on a
// stop request or at a timeout ends it with a sequence of steps one grace period apart (a request the
// child reads, then signals), so that a tool that handles SIGINT can still write what it measured; a
// kill request ends it at once. The callers say what to do with the child's output in between: read
// pipes (run_captured, external runners, the orchestrator's workers) or nothing (a log file).
#pragma once

#include <signal.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/process/subprocess.hpp"

namespace inferbench {

struct StopPolicy {
    std::function<bool()> should_stop;  // polled; true starts the stop
    std::function<bool()> kill_now;     // polled; true sends SIGKILL at once, wherever the stop was
    std::int64_t timeout_ns = 0;        // 0: none. Reaching it starts the stop too
    std::int64_t timeout_from_ns = 0;   // the monotonic_ns() the timeout counts from; 0: the call of supervise()
    bool timeout_kills = false;         // the timeout sends SIGKILL at once instead of starting the stop
    // The stop's first step, if set: a request the child reads without a signal (a flag in shared
    // memory), so that it can end by itself; the signals follow it, the first one grace_ns later.
    std::function<void()> ask;
    // The stop's signals: the first at once (after `ask`: one grace later), each next one grace_ns later.
    std::vector<int> signals{SIGKILL};
    std::int64_t grace_ns = 2'000'000'000;
    bool whole_group = false;  // to the child's process group (spawned with new_process_group)
    int poll_ms = 20;          // how often the child and the requests are looked at
};

struct Supervised {
    ExitStatus status;
    bool stopped = false;         // a stop was started: asked for, or the timeout passed
    bool stop_requested = false;  // should_stop or kill_now asked for it while the child ran
    bool timed_out = false;       // the timeout passed
};

// Returns once the child has ended. `between(wait_ms)` runs between two looks at the child and waits at
// most wait_ms (policy.poll_ms; for output to read, say); without it the supervisor sleeps that long.
Supervised supervise(Child& child, const StopPolicy& policy, const std::function<void(int wait_ms)>& between = {});

// Runs argv with stdout and stderr into `log` (truncated) and stdin from /dev/null, supervised under
// `policy`. The child stays in our process group, so a kill of our group takes it too, and is killed
// when the spawning thread ends (PR_SET_PDEATHSIG), for a SIGKILL that gives us no chance to.
// Throws EnvironmentError when argv[0] is not found or `log` cannot be written.
Supervised run_logged(const std::vector<std::string>& argv, const std::filesystem::path& log,
                      const StopPolicy& policy = {});

}  // namespace inferbench
