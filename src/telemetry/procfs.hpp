// CPU and memory of a process tree and of the host, from /proc. The parsers take file contents (tests
// feed strings); the readers keep the files open and re-read them with pread, which is what makes
// sampling a process with many threads at 100 Hz cheap.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::telemetry::procfs {

// /proc/PID/stat or /proc/PID/task/TID/stat.
struct TaskStat {
    int pid = 0;
    std::string comm;  // may hold spaces and parentheses: "(tmux: server)", "a) b"
    char state = '?';
    int ppid = 0;
    std::uint64_t utime_ticks = 0;  // clock ticks (sysconf(_SC_CLK_TCK))
    std::uint64_t stime_ticks = 0;
    std::uint64_t start_ticks = 0;  // since boot: with pid, tells a reused pid apart
    int processor = -1;             // the CPU it last ran on
};
std::optional<TaskStat> parse_stat(std::string_view content);

struct CpuTicks {
    std::uint64_t busy = 0;   // user, nice, system, irq, softirq, steal
    std::uint64_t total = 0;  // busy + idle + iowait
};
// /proc/stat: `all` from the "cpu" line, `cores` indexed by the N of "cpuN" (gaps stay zero).
struct SystemCpu {
    CpuTicks all;
    std::vector<CpuTicks> cores;
};
std::optional<SystemCpu> parse_system_stat(std::string_view content);

struct MemInfo {
    std::optional<double> total_mib;
    std::optional<double> available_mib;
};
MemInfo parse_meminfo(std::string_view content);

// /proc/PID/status: resident set now (VmRSS) and its high-water mark (VmHWM).
struct ProcessMemory {
    std::optional<double> rss_mib;
    std::optional<double> peak_rss_mib;
};
ProcessMemory parse_status(std::string_view content);

// /proc/PID/statm: the resident set (its second field, in pages of `page_bytes`), a much cheaper read than
// status. Nothing when the line is not one, or when the process has no address space (a zombie's zeros).
std::optional<double> parse_statm_rss_mib(std::string_view content, long page_bytes);

// /proc/PID/task/TID/children: "123 456 ".
std::vector<int> parse_children(std::string_view content);

// A file read again and again from its start through one open descriptor.
class CachedFile {
public:
    explicit CachedFile(const std::filesystem::path& path);
    CachedFile(CachedFile&& other) noexcept;
    CachedFile& operator=(CachedFile&& other) noexcept;
    CachedFile(const CachedFile&) = delete;
    CachedFile& operator=(const CachedFile&) = delete;
    ~CachedFile();

    bool is_open() const { return fd_ >= 0; }
    int open_errno() const { return errno_; }
    // The whole file as it is now; nothing when it cannot be read (e.g. the process ended).
    std::optional<std::string_view> read();

private:
    int fd_ = -1;
    int errno_ = 0;
    std::string buffer_;
};

struct TreeReading {
    std::vector<int> pids;                  // the tree as last scanned, root first
    std::optional<double> cpu_pct;          // since the previous reading; 100 = one core
    std::vector<double> cpu_pct_per_core;   // index = CPU number; empty when not read this time
    std::optional<double> rss_mib;          // summed over the tree's processes
    std::optional<double> peak_rss_mib;     // summed high-water marks: an upper bound of the tree's peak
};

// The CPU time and memory of a process and its descendants. The tree is rescanned at most every
// `rescan_ns` (children through /proc/PID/task/TID/children where the kernel has it, else by the ppid
// of every process): a worker starts its children while loading, and a rescan costs a read per thread
// or per process of the host.
class ProcessTreeReader {
public:
    ProcessTreeReader(int root_pid, std::filesystem::path proc_root = "/proc", std::int64_t rescan_ns = 2'000'000'000);
    // Every reading: the tree's CPU share since the last reading (stat) and its RSS (statm). With
    // `occasional`, also the per-core shares since the last such reading (a stat read per thread, the
    // costly part with many threads) and the peak RSS (status); samplers ask for those once a second.
    TreeReading read(std::int64_t now_ns, bool occasional = true);
    bool root_seen() const { return root_seen_; }

private:
    struct Thread {
        CachedFile stat;
        std::uint64_t start_ticks = 0;
        std::uint64_t ticks = 0;
    };
    struct Process {
        CachedFile stat;
        CachedFile statm;
        CachedFile status;
        std::uint64_t start_ticks = 0;
        std::uint64_t ticks = 0;
        bool fresh = true;  // no previous reading to take a difference from
        std::map<int, Thread> threads;
    };

    Process new_process(int pid) const;
    void rescan(std::int64_t now_ns);
    std::vector<int> children_of(int pid) const;
    std::vector<int> children_by_ppid(const std::vector<int>& parents) const;
    void scan_threads(int pid, Process& process);

    int root_pid_;
    std::filesystem::path proc_;
    std::int64_t rescan_ns_;
    std::int64_t last_scan_ns_ = 0;
    std::int64_t last_read_ns_ = 0;
    std::int64_t last_per_core_ns_ = 0;
    bool first_ = true;
    bool root_seen_ = false;
    std::optional<bool> has_children_files_;
    double ticks_per_s_;
    long page_bytes_;
    std::vector<int> pids_;
    std::map<int, Process> processes_;
    std::vector<double> per_core_ticks_;
};

struct HostReading {
    std::optional<double> cpu_pct;  // since the previous reading; 100 = every core busy
    std::optional<double> memory_used_mib;
    std::optional<double> memory_total_mib;
};

// Host CPU utilisation (/proc/stat) and memory in use (MemTotal - MemAvailable, /proc/meminfo).
class HostReader {
public:
    explicit HostReader(const std::filesystem::path& proc_root = "/proc");
    HostReading read();

private:
    CachedFile stat_;
    CachedFile meminfo_;
    std::optional<CpuTicks> previous_;
};

}  // namespace inferbench::telemetry::procfs
