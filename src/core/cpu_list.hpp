// CPU sets as Linux writes them ("0-7,16-23": /proc/PID/status Cpus_allowed_list, cpuset files, taskset -c),
// the one reading and writing of that text, and the CPUs this process may run on.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// The highest CPU number a list may name, plus one: glibc's fixed cpu_set_t, which pinning uses.
inline constexpr int kMaxCpus = 1024;

// The CPUs of `text`, ascending and each once; nullopt with `why` set ("'8-3' is a range whose end is below its
// start") where it is not a list of numbers and ranges below kMaxCpus.
std::optional<std::vector<int>> parse_cpu_list(std::string_view text, std::string& why);

// Ascending CPUs as the shortest list: {0,1,2,3,8} -> "0-3,8"; empty for none.
std::string format_cpu_list(std::span<const int> cpus);

// The CPUs this process may run on (sched_getaffinity); empty where it cannot be read.
std::vector<int> allowed_cpus();

}  // namespace inferbench
