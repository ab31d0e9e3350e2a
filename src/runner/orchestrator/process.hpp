// Starts a worker process in its own process group and supervises it with core/process/supervise: timeout,
// interruption, the last lines of its output, its events, and how it ended. The whole group is killed
// at the end so nothing it started outlives it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runner/wire/worker_protocol.hpp"

namespace inferbench::runner {

struct WorkerLaunch {
    std::filesystem::path executable;
    std::vector<std::string> arguments;  // after argv[0]
    std::string request;                 // written to the worker's stdin
    int trace_fd = -1;                   // becomes the worker's fd 3
    std::int64_t timeout_ns = 0;         // 0: none
    std::vector<int> cpu_affinity;       // pinned before exec (SpawnOptions); empty: not pinned
    std::optional<int> memory_node;      // preferred before exec (SpawnOptions)
};

struct SuperviseHooks {
    std::function<void()> on_tick;        // about twice a second
    std::function<bool()> interrupted;    // polled; true starts a graceful stop
    std::function<bool()> end_now;        // polled; true kills the worker's group at once (stop_requested)
    std::function<void()> request_stop;   // asks the worker to stop measuring
    std::function<void(int pid)> on_started;                // right after the worker was started
    std::function<void(const worker_protocol::Event&)> on_event;  // each event as it arrives
    std::int64_t stop_grace_ns = 5'000'000'000;
};

struct WorkerOutcome {
    bool exited = false;       // exited normally, with exit_code
    int exit_code = -1;
    int signal = 0;            // the signal that ended it, if any
    bool timed_out = false;    // killed by us after the timeout
    bool oom_killed = false;   // the kernel's OOM killer ended a process of our cgroup meanwhile
    bool stop_requested = false;
    std::vector<worker_protocol::Event> events;
    std::string output_tail;   // last lines of stdout and stderr
    std::int64_t wall_ns = 0;
    std::int64_t timeout_ns = 0;

    // One line saying how a failed worker ended, e.g. "killed by signal 9 (SIGKILL)".
    std::string describe_ending() const;
    // The first event of kind E the worker sent, or null.
    template <typename E>
    const E* find_event() const {
        for (const auto& event : events)
            if (const auto* found = std::get_if<E>(&event)) return found;
        return nullptr;
    }
};

WorkerOutcome run_worker(const WorkerLaunch& launch, const SuperviseHooks& hooks);

}  // namespace inferbench::runner
