// Who a process is, beyond its pid. Pids are reused, so a process is known by its pid together with
// its start time (clock ticks after boot), the kernel boot it ran in and its pid namespace. A results
// store keeps this of the orchestrator writing a run, so that a later reader can tell a run still
// being written from one whose orchestrator was killed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

namespace inferbench {

struct ProcessIdentity {
    std::int64_t pid = 0;
    std::int64_t start_ticks = 0;  // field 22 of /proc/PID/stat
    std::string host;              // gethostname
    std::string boot_id;           // /proc/sys/kernel/random/boot_id
    std::string pid_namespace;     // the link /proc/PID/ns/pid, e.g. "pid:[4026531836]"
};

ProcessIdentity current_process_identity();

// The start time of a live process (a zombie counts as ended), or nothing.
std::optional<std::int64_t> process_start_ticks(pid_t pid);

enum class ProcessState {
    alive,    // that very process still exists (it may be stopped)
    gone,     // it ended: its pid is free or taken by a later process, or the host rebooted since
    unknown,  // another host or another pid namespace: this process cannot look
};

ProcessState process_state(const ProcessIdentity& identity);

}  // namespace inferbench
