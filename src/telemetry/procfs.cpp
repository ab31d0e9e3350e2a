#include "telemetry/procfs.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <set>
#include <utility>

#include "core/time_units.hpp"

namespace inferbench::telemetry::procfs {
namespace {

constexpr double kKibPerMib = 1024.0;

template <typename T>
std::optional<T> number(std::string_view text) {
    T value{};
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// Whitespace-separated words of `text`.
std::vector<std::string_view> words(std::string_view text) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t')) ++i;
        const std::size_t start = i;
        while (i < text.size() && text[i] != ' ' && text[i] != '\n' && text[i] != '\t') ++i;
        if (i > start) out.push_back(text.substr(start, i - start));
    }
    return out;
}

// "Key:   1234 kB" lines: the number of `key`, in KiB.
std::optional<double> kib_field(std::string_view content, std::string_view key) {
    std::size_t pos = 0;
    while (pos < content.size()) {
        const std::size_t end = std::min(content.find('\n', pos), content.size());
        const std::string_view line = content.substr(pos, end - pos);
        pos = end + 1;
        if (!line.starts_with(key) || line.size() <= key.size() || line[key.size()] != ':') continue;
        const auto parts = words(line.substr(key.size() + 1));
        if (parts.empty()) return std::nullopt;
        const auto value = number<std::uint64_t>(parts[0]);
        return value ? std::optional<double>(static_cast<double>(*value)) : std::nullopt;
    }
    return std::nullopt;
}

std::vector<int> numeric_entries(const std::filesystem::path& dir) {
    std::vector<int> out;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (const auto id = number<int>(it->path().filename().string())) out.push_back(*id);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::optional<TaskStat> read_stat(CachedFile& file) {
    const auto content = file.read();
    return content ? parse_stat(*content) : std::nullopt;
}

}  // namespace

std::optional<TaskStat> parse_stat(std::string_view content) {
    // The command name is in parentheses and may itself hold ") ": the last ')' ends it.
    const std::size_t open = content.find('(');
    const std::size_t close = content.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
    TaskStat stat;
    const auto head = words(content.substr(0, open));
    const auto pid = head.size() == 1 ? number<int>(head[0]) : std::nullopt;
    if (!pid) return std::nullopt;
    stat.pid = *pid;
    stat.comm = std::string(content.substr(open + 1, close - open - 1));
    // Fields 3 (state) to 39 (processor); field N is fields[N - 3]. No allocation: read 100 times a second.
    std::array<std::string_view, 37> fields;
    std::size_t count = 0;
    const std::string_view rest = content.substr(close + 1);
    for (std::size_t i = 0; i < rest.size() && count < fields.size();) {
        while (i < rest.size() && (rest[i] == ' ' || rest[i] == '\n')) ++i;
        const std::size_t start = i;
        while (i < rest.size() && rest[i] != ' ' && rest[i] != '\n') ++i;
        if (i > start) fields[count++] = rest.substr(start, i - start);
    }
    if (count < fields.size() || fields[0].size() != 1) return std::nullopt;
    stat.state = fields[0][0];
    const auto ppid = number<int>(fields[1]);
    const auto utime = number<std::uint64_t>(fields[11]);
    const auto stime = number<std::uint64_t>(fields[12]);
    const auto start = number<std::uint64_t>(fields[19]);
    const auto processor = number<int>(fields[36]);
    if (!ppid || !utime || !stime || !start || !processor) return std::nullopt;
    stat.ppid = *ppid;
    stat.utime_ticks = *utime;
    stat.stime_ticks = *stime;
    stat.start_ticks = *start;
    stat.processor = *processor;
    return stat;
}

std::optional<SystemCpu> parse_system_stat(std::string_view content) {
    SystemCpu cpu;
    bool found = false;
    std::size_t pos = 0;
    while (pos < content.size()) {
        const std::size_t end = std::min(content.find('\n', pos), content.size());
        const auto fields = words(content.substr(pos, end - pos));
        pos = end + 1;
        if (fields.size() < 5 || !fields[0].starts_with("cpu")) continue;
        // user nice system idle iowait irq softirq steal (guest time is already in user).
        std::uint64_t values[8] = {};
        for (std::size_t i = 0; i < 8 && i + 1 < fields.size(); ++i) {
            const auto v = number<std::uint64_t>(fields[i + 1]);
            if (!v) return std::nullopt;
            values[i] = *v;
        }
        CpuTicks ticks;
        ticks.busy = values[0] + values[1] + values[2] + values[5] + values[6] + values[7];
        ticks.total = ticks.busy + values[3] + values[4];
        if (fields[0] == "cpu") {
            cpu.all = ticks;
            found = true;
        } else if (const auto index = number<std::size_t>(fields[0].substr(3))) {
            if (cpu.cores.size() <= *index) cpu.cores.resize(*index + 1);
            cpu.cores[*index] = ticks;
        }
    }
    return found ? std::optional<SystemCpu>(cpu) : std::nullopt;
}

MemInfo parse_meminfo(std::string_view content) {
    MemInfo info;
    if (const auto total = kib_field(content, "MemTotal")) info.total_mib = *total / kKibPerMib;
    if (const auto available = kib_field(content, "MemAvailable")) info.available_mib = *available / kKibPerMib;
    return info;
}

ProcessMemory parse_status(std::string_view content) {
    ProcessMemory memory;
    if (const auto rss = kib_field(content, "VmRSS")) memory.rss_mib = *rss / kKibPerMib;
    if (const auto hwm = kib_field(content, "VmHWM")) memory.peak_rss_mib = *hwm / kKibPerMib;
    return memory;
}

std::optional<double> parse_statm_rss_mib(std::string_view content, long page_bytes) {
    const auto fields = words(content);
    if (fields.size() < 2) return std::nullopt;
    // A process that has no address space left (a zombie, or one tearing it down) reads all zeros: its
    // resident set was not read, which is not a resident set of 0.
    const auto size = number<std::uint64_t>(fields[0]);
    const auto pages = number<std::uint64_t>(fields[1]);
    if (!size || *size == 0 || !pages) return std::nullopt;
    return static_cast<double>(*pages) * static_cast<double>(page_bytes) / (kKibPerMib * 1024.0);
}

std::vector<int> parse_children(std::string_view content) {
    std::vector<int> out;
    for (const auto word : words(content))
        if (const auto pid = number<int>(word)) out.push_back(*pid);
    return out;
}

CachedFile::CachedFile(const std::filesystem::path& path) {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) errno_ = errno;
}

CachedFile::CachedFile(CachedFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), errno_(other.errno_), buffer_(std::move(other.buffer_)) {}

CachedFile& CachedFile::operator=(CachedFile&& other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) ::close(fd_);
        fd_ = std::exchange(other.fd_, -1);
        errno_ = other.errno_;
        buffer_ = std::move(other.buffer_);
    }
    return *this;
}

CachedFile::~CachedFile() {
    if (fd_ >= 0) ::close(fd_);
}

std::optional<std::string_view> CachedFile::read() {
    if (fd_ < 0) return std::nullopt;
    if (buffer_.empty()) buffer_.resize(4096);
    std::size_t size = 0;
    while (true) {
        const ssize_t n = ::pread(fd_, buffer_.data() + size, buffer_.size() - size, static_cast<off_t>(size));
        if (n < 0) {
            if (errno == EINTR) continue;
            return std::nullopt;  // ESRCH: the process is gone
        }
        const std::size_t room = buffer_.size() - size;
        size += static_cast<std::size_t>(n);
        // A short read is the end: asking again past it would make procfs generate the file once more.
        if (static_cast<std::size_t>(n) < room) break;
        buffer_.resize(buffer_.size() * 2);
    }
    return std::string_view(buffer_.data(), size);
}

ProcessTreeReader::ProcessTreeReader(int root_pid, std::filesystem::path proc_root, std::int64_t rescan_ns)
    : root_pid_(root_pid),
      proc_(std::move(proc_root)),
      rescan_ns_(rescan_ns),
      ticks_per_s_(static_cast<double>(sysconf(_SC_CLK_TCK))),
      page_bytes_(sysconf(_SC_PAGESIZE)),
      per_core_ticks_(static_cast<std::size_t>(std::max(1L, sysconf(_SC_NPROCESSORS_CONF))), 0.0) {}

std::vector<int> ProcessTreeReader::children_of(int pid) const {
    std::vector<int> out;
    const auto task_dir = proc_ / std::to_string(pid) / "task";
    for (const int tid : numeric_entries(task_dir)) {
        CachedFile file(task_dir / std::to_string(tid) / "children");
        if (const auto content = file.read()) {
            const auto children = parse_children(*content);
            out.insert(out.end(), children.begin(), children.end());
        }
    }
    return out;
}

// Without children files: every process's parent, from its stat line.
std::vector<int> ProcessTreeReader::children_by_ppid(const std::vector<int>& parents) const {
    std::multimap<int, int> by_parent;
    for (const int pid : numeric_entries(proc_)) {
        CachedFile file(proc_ / std::to_string(pid) / "stat");
        if (const auto stat = read_stat(file)) by_parent.emplace(stat->ppid, pid);
    }
    std::vector<int> tree = parents;
    for (std::size_t i = 0; i < tree.size(); ++i) {
        const auto [first, last] = by_parent.equal_range(tree[i]);
        for (auto it = first; it != last; ++it) tree.push_back(it->second);
    }
    tree.erase(tree.begin(), tree.begin() + static_cast<std::ptrdiff_t>(parents.size()));
    return tree;
}

void ProcessTreeReader::scan_threads(int pid, Process& process) {
    const auto task_dir = proc_ / std::to_string(pid) / "task";
    std::set<int> alive;
    for (const int tid : numeric_entries(task_dir)) {
        alive.insert(tid);
        if (process.threads.contains(tid)) continue;
        Thread thread{CachedFile(task_dir / std::to_string(tid) / "stat"), 0, 0};
        const auto stat = read_stat(thread.stat);
        if (!stat) continue;
        thread.start_ticks = stat->start_ticks;
        thread.ticks = stat->utime_ticks + stat->stime_ticks;
        process.threads.emplace(tid, std::move(thread));
    }
    std::erase_if(process.threads, [&](const auto& entry) { return !alive.contains(entry.first); });
}

ProcessTreeReader::Process ProcessTreeReader::new_process(int pid) const {
    const auto dir = proc_ / std::to_string(pid);
    return Process{CachedFile(dir / "stat"), CachedFile(dir / "statm"), CachedFile(dir / "status"), 0, 0, true, {}};
}

void ProcessTreeReader::rescan(std::int64_t now_ns) {
    last_scan_ns_ = now_ns;
    if (!has_children_files_) {
        std::error_code ec;
        has_children_files_ = std::filesystem::exists(
            proc_ / std::to_string(root_pid_) / "task" / std::to_string(root_pid_) / "children", ec);
    }
    std::vector<int> tree;
    if (std::error_code ec; std::filesystem::exists(proc_ / std::to_string(root_pid_) / "stat", ec)) {
        tree.push_back(root_pid_);
        if (*has_children_files_) {
            for (std::size_t i = 0; i < tree.size(); ++i) {
                const auto children = children_of(tree[i]);
                tree.insert(tree.end(), children.begin(), children.end());
            }
        } else {
            const auto descendants = children_by_ppid(tree);
            tree.insert(tree.end(), descendants.begin(), descendants.end());
        }
    }
    std::map<int, Process> kept;
    for (const int pid : tree) {
        auto node = processes_.extract(pid);
        Process process = node ? std::move(node.mapped()) : new_process(pid);
        if (node.empty()) {
            const auto stat = read_stat(process.stat);
            if (!stat) continue;
            process.start_ticks = stat->start_ticks;
        }
        scan_threads(pid, process);
        kept.emplace(pid, std::move(process));
    }
    processes_ = std::move(kept);
    pids_ = tree;
    std::erase_if(pids_, [&](int pid) { return !processes_.contains(pid); });
    if (!pids_.empty() && pids_.front() == root_pid_) root_seen_ = true;
}

TreeReading ProcessTreeReader::read(std::int64_t now_ns, bool occasional) {
    if (first_ || now_ns - last_scan_ns_ >= rescan_ns_) rescan(now_ns);
    std::fill(per_core_ticks_.begin(), per_core_ticks_.end(), 0.0);
    double total_ticks = 0;
    TreeReading reading;
    for (auto it = processes_.begin(); it != processes_.end();) {
        Process& process = it->second;
        const auto stat = read_stat(process.stat);
        if (!stat || stat->start_ticks != process.start_ticks) {  // ended (or its pid was reused)
            it = processes_.erase(it);
            continue;
        }
        const std::uint64_t ticks = stat->utime_ticks + stat->stime_ticks;
        if (!process.fresh && ticks >= process.ticks) total_ticks += static_cast<double>(ticks - process.ticks);
        process.ticks = ticks;
        process.fresh = false;
        if (const auto content = process.statm.read())
            if (const auto rss = parse_statm_rss_mib(*content, page_bytes_)) reading.rss_mib = reading.rss_mib.value_or(0) + *rss;
        if (const auto content = occasional ? process.status.read() : std::nullopt)
            if (const auto peak = parse_status(*content).peak_rss_mib) reading.peak_rss_mib = reading.peak_rss_mib.value_or(0) + *peak;
        // The tree's share of each core: each thread's CPU time since the last per-core reading,
        // attributed to the CPU it last ran on. An attribution by last CPU: a thread that migrated
        // within the interval has all of its time put on the core it ended on.
        for (auto& [tid, thread] : process.threads) {
            if (!occasional) break;
            const auto thread_stat = read_stat(thread.stat);
            if (!thread_stat || thread_stat->start_ticks != thread.start_ticks) continue;
            const std::uint64_t thread_ticks = thread_stat->utime_ticks + thread_stat->stime_ticks;
            const auto core = static_cast<std::size_t>(std::max(0, thread_stat->processor));
            if (core >= per_core_ticks_.size()) per_core_ticks_.resize(core + 1, 0.0);
            if (thread_ticks >= thread.ticks) per_core_ticks_[core] += static_cast<double>(thread_ticks - thread.ticks);
            thread.ticks = thread_ticks;
        }
        ++it;
    }
    // Clock ticks are 10 ms on most kernels: one reading at 100 Hz is a coarse figure, means over a
    // phase are not.
    const double seconds = ns_to_s(now_ns - last_read_ns_);
    if (!first_ && seconds > 0 && !processes_.empty()) reading.cpu_pct = total_ticks * 100.0 / ticks_per_s_ / seconds;
    if (occasional) {
        const double core_seconds = ns_to_s(now_ns - last_per_core_ns_);
        if (last_per_core_ns_ > 0 && core_seconds > 0 && !processes_.empty()) {
            reading.cpu_pct_per_core.reserve(per_core_ticks_.size());
            for (const double core_ticks : per_core_ticks_)
                reading.cpu_pct_per_core.push_back(core_ticks * 100.0 / ticks_per_s_ / core_seconds);
        }
        last_per_core_ns_ = now_ns;
    }
    std::erase_if(pids_, [&](int pid) { return !processes_.contains(pid); });
    reading.pids = pids_;
    first_ = false;
    last_read_ns_ = now_ns;
    return reading;
}

HostReader::HostReader(const std::filesystem::path& proc_root)
    : stat_(proc_root / "stat"), meminfo_(proc_root / "meminfo") {}

HostReading HostReader::read() {
    HostReading reading;
    if (const auto content = stat_.read()) {
        if (const auto cpu = parse_system_stat(*content)) {
            if (previous_ && cpu->all.total > previous_->total && cpu->all.busy >= previous_->busy)
                reading.cpu_pct = 100.0 * static_cast<double>(cpu->all.busy - previous_->busy) /
                                  static_cast<double>(cpu->all.total - previous_->total);
            previous_ = cpu->all;
        }
    }
    if (const auto content = meminfo_.read()) {
        const auto info = parse_meminfo(*content);
        reading.memory_total_mib = info.total_mib;
        if (info.total_mib && info.available_mib) reading.memory_used_mib = *info.total_mib - *info.available_mib;
    }
    return reading;
}

}  // namespace inferbench::telemetry::procfs
