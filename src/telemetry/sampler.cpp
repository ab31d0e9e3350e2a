#include "telemetry/sampler.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <ctime>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/process/subprocess.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/procfs.hpp"
#include "telemetry/rapl.hpp"

namespace inferbench::telemetry {
namespace {

constexpr std::int64_t kMaxReservedRounds = 1'000'000;
// What each round reads is what changes that fast; the rest waits for its own period. Measured on an
// H200 host (driver 580, a VM): a wake-up alone costs ~40 us of CPU, so the 100 rounds a second of
// 100 Hz leave ~60 us per round for everything else to stay under 1% of one core.
//  - every round: instant power, SM clock, clock-event reasons;
//  - every 100 ms: the CPU side (CPU time comes in 10 ms ticks, a share over less says little), the
//    GPU's slowly changing metrics and those the driver updates every 1/6 s at best (utilisation, the
//    1 s average power);
//  - every second: per-core shares (a stat read per thread), peak RSS, the host's CPU and memory
//    (/proc/stat grows with cores x interrupts), the power limit, framebuffer use (62 us of CPU per
//    call there), the worker's own GPU memory;
//  - the energy counter (3-13 ms of CPU per call there) every 30 s: energy over a phase needs only
//    its two ends;
//  - everything on the first round of each phase (load, warm-up, measure, teardown); PCIe throughput (1 ms of CPU and 20 ms blocked per
//    direction) every 2 s on a thread of its own.
// The first version read energy and PCIe every round: 44% of one core at 100 Hz.
constexpr std::int64_t kFullReadNs = 99'000'000;
constexpr std::int64_t kOccasionalReadNs = 990'000'000;
constexpr std::int64_t kEnergyReadNs = 30'000'000'000;
constexpr std::int64_t kPcieReadNs = 2'000'000'000;
constexpr std::int64_t kRoundWithoutNvmlNs = 100'000'000;

std::int64_t thread_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Waits until `deadline_ns` (CLOCK_MONOTONIC) or until one of `fds` can be read; returns the
// descriptors that can.
std::vector<int> wait_until(std::int64_t deadline_ns, std::initializer_list<int> fds) {
    std::vector<pollfd> polled;
    for (const int fd : fds)
        if (fd >= 0) polled.push_back({fd, POLLIN, 0});
    const std::int64_t left = std::max<std::int64_t>(0, deadline_ns - monotonic_ns());
    const timespec timeout{static_cast<time_t>(left / 1'000'000'000), static_cast<long>(left % 1'000'000'000)};
    std::vector<int> ready;
    if (ppoll(polled.data(), polled.size(), &timeout, nullptr) > 0) {
        for (const auto& p : polled)
            if (p.revents != 0) ready.push_back(p.fd);
    }
    return ready;
}

TelemetrySource source(std::string name, bool ok, std::string detail) {
    return {std::move(name), ok ? "ok" : "unavailable", std::move(detail)};
}

}  // namespace

std::optional<GpuMode> parse_gpu_mode(std::string_view text) {
    if (text == "auto") return GpuMode::automatic;
    if (text == "nvml") return GpuMode::nvml;
    if (text == "nvidia-smi") return GpuMode::nvidia_smi;
    if (text == "off") return GpuMode::off;
    return std::nullopt;
}

std::string_view to_string(GpuMode mode) {
    switch (mode) {
        case GpuMode::automatic: return "auto";
        case GpuMode::nvml: return "nvml";
        case GpuMode::nvidia_smi: return "nvidia-smi";
        case GpuMode::off: return "off";
    }
    return "auto";
}

GpuAccess open_gpu_access(GpuMode mode, const std::string& nvml_library) {
    GpuAccess access;
    if (mode == GpuMode::off) {
        access.sources.push_back(source("nvml", false, "GPU telemetry turned off (telemetry_gpu=off)"));
        return access;
    }
    if (mode != GpuMode::nvidia_smi) {
        try {
            access.nvml = Nvml::open(nvml_library);
            if (access.nvml->device_count() == 0) {
                access.sources.push_back(source("nvml", false, fmt::format("{}: no GPU found", nvml_library)));
                access.nvml.reset();
                return access;
            }
            access.sources.push_back(source("nvml", true, ""));  // detail filled per benchmark
            return access;
        } catch (const std::exception& e) {
            access.sources.push_back(source("nvml", false, e.what()));
            if (mode == GpuMode::nvml) return access;
        }
    }
    const auto program = find_program("nvidia-smi");
    if (!program) {
        access.sources.push_back(source("nvidia-smi", false, "nvidia-smi not found on PATH"));
        return access;
    }
    // An unknown field makes the whole query fail: ask the driver which of ours it knows.
    const CapturedRun help = run_captured({program->string(), "--help-query-gpu"}, std::nullopt, 10'000);
    if (!help.status.success()) {
        access.sources.push_back(source("nvidia-smi", false,
                                        fmt::format("nvidia-smi --help-query-gpu: {}{}", help.status.describe(),
                                                    help.err.empty() ? "" : ": " + std::string(trim(help.err)))));
        return access;
    }
    access.smi_fields = nvidia_smi_supported_query_fields(help.out);
    if (access.smi_fields.empty() || access.smi_fields.front() != "index") {
        access.sources.push_back(source("nvidia-smi", false, "nvidia-smi --help-query-gpu lists none of the fields inferbench reads"));
        access.smi_fields.clear();
        return access;
    }
    access.sources.push_back(source("nvidia-smi", true, ""));
    return access;
}

void align_phases(std::span<GpuSample> gpu, std::span<CpuSample> cpu, std::int64_t first_start_ns,
                  std::int64_t last_end_ns) {
    const auto align = [&](SamplePhase& phase, std::int64_t t_ns) {
        if (phase == SamplePhase::load) return;
        if (t_ns >= first_start_ns && t_ns <= last_end_ns) phase = SamplePhase::measure;
        else if (phase == SamplePhase::measure) phase = t_ns < first_start_ns ? SamplePhase::warmup : SamplePhase::teardown;
    };
    for (auto& s : gpu) align(s.phase, s.t_ns);
    for (auto& s : cpu) align(s.phase, s.t_ns);
}

struct Sampler::State {
    const GpuAccess& gpu;
    SamplerOptions options;
    std::int64_t period_ns = 100'000'000;  // of the rate asked for
    std::int64_t round_ns = 100'000'000;   // of the sampling rounds
    int pid = 0;
    std::atomic<SamplePhase> phase{SamplePhase::load};
    std::atomic<bool> stopping{false};
    UniqueFd stop_fd;
    std::thread thread;
    std::thread pcie_thread;
    bool stopped = false;
    SamplerResult result;
    std::int64_t started_ns = 0;
    std::int64_t last_full_ns = 0;
    std::int64_t last_energy_ns = 0;
    std::int64_t last_occasional_ns = 0;
    std::optional<SamplePhase> last_phase;  // of the last round
    std::vector<int> gpu_indices;  // the GPUs read (SamplerOptions::gpus), NVML's only
    std::vector<int> tree_pids;  // the worker's process tree as last read
    std::optional<procfs::ProcessTreeReader> tree;
    std::optional<procfs::HostReader> host;
    std::optional<RaplReader> rapl;

    // PCIe readings of the helper thread, each handed to the next sample of its GPU once.
    std::mutex pcie_mutex;
    std::vector<std::optional<PcieThroughput>> pcie_fresh;
    std::atomic<std::int64_t> pcie_cpu_ns{0};

    // nvidia-smi fallback
    std::optional<Child> smi;
    std::string smi_pending;
    TailBuffer smi_stderr{2048};
    std::int64_t smi_lines = 0, smi_rejected = 0;
    std::string smi_failure;

    State(const GpuAccess& access, SamplerOptions opts) : gpu(access), options(std::move(opts)) {}

    void run();
    void run_pcie();
    void sample_round();
    void sample_gpus(SamplePhase current, const NvmlReadSet& set);
    void start_smi();
    void read_smi();
    std::vector<TelemetrySource> gpu_sources() const;
};

void Sampler::State::start_smi() {
    const int period_ms = std::max(1, static_cast<int>(std::lround(ns_to_ms(period_ns))));
    SpawnOptions spawn_options;
    spawn_options.new_process_group = true;
    // nvidia-smi --loop never ends by itself: it goes with this sampler thread, or with a killed inferbench.
    spawn_options.kill_with_parent = true;
    try {
        smi.emplace(spawn(nvidia_smi_query_command(period_ms, std::nullopt, gpu.smi_fields), spawn_options));
    } catch (const std::exception& e) {
        smi_failure = e.what();
    }
}

// Each complete line is stamped on receipt: nvidia-smi's own timestamps are wall-clock text.
void Sampler::State::read_smi() {
    const std::int64_t now = monotonic_ns();
    const SamplePhase current = phase.load(std::memory_order_relaxed);
    drain(smi->stderr_pipe(), [&](std::string_view data) { smi_stderr.append(data); });
    const bool open = drain(smi->stdout_pipe(), [&](std::string_view data) { smi_pending.append(data); });
    std::size_t newline;
    while ((newline = smi_pending.find('\n')) != std::string::npos) {
        const std::string line = smi_pending.substr(0, newline);
        smi_pending.erase(0, newline + 1);
        if (trim(line).empty()) continue;
        auto sample = parse_nvidia_smi_query_line(line, gpu.smi_fields);
        if (!sample) {
            ++smi_rejected;
            continue;
        }
        if (options.gpus && std::find(options.gpus->begin(), options.gpus->end(), sample->gpu_index) == options.gpus->end())
            continue;
        sample->t_ns = now;
        sample->phase = current;
        result.gpu.push_back(*sample);
        ++smi_lines;
    }
    if (!open) {
        const ExitStatus status = smi->wait();
        drain(smi->stderr_pipe(), [&](std::string_view data) { smi_stderr.append(data); });
        smi_failure = fmt::format("nvidia-smi ended ({}){}", status.describe(),
                                  smi_stderr.text().empty() ? "" : ": " + smi_stderr.last_lines(2, 200, " / "));
        smi.reset();
    }
}

void Sampler::State::sample_round() {
    const SamplePhase current = phase.load(std::memory_order_relaxed);
    const std::int64_t now = monotonic_ns();
    // A new phase starts with every metric read, so that even a short one has each of them.
    const bool phase_changed = !last_phase || *last_phase != current;
    last_phase = current;
    const bool full = phase_changed || now - last_full_ns >= kFullReadNs;
    const bool occasional = phase_changed || now - last_occasional_ns >= kOccasionalReadNs;
    if (full) {
        last_full_ns = now;
        if (occasional) last_occasional_ns = now;
        CpuSample cpu;
        cpu.t_ns = now;
        cpu.phase = current;
        auto process = tree->read(cpu.t_ns, occasional);
        cpu.process_cpu_pct = process.cpu_pct;
        cpu.process_cpu_pct_per_core = std::move(process.cpu_pct_per_core);
        cpu.process_rss_mib = process.rss_mib;
        cpu.process_peak_rss_mib = process.peak_rss_mib;
        if (occasional) {
            const auto host_reading = host->read();
            cpu.host_cpu_pct = host_reading.cpu_pct;
            cpu.host_memory_used_mib = host_reading.memory_used_mib;
            cpu.host_memory_total_mib = host_reading.memory_total_mib;
        }
        if (rapl->available()) cpu.cpu_package_energy_j = rapl->read_joules();
        result.cpu.push_back(std::move(cpu));
        tree_pids = process.pids.empty() ? std::vector<int>{pid} : std::move(process.pids);
    }
    if (!gpu.nvml) return;
    const bool energy = phase_changed || now - last_energy_ns >= kEnergyReadNs;
    if (energy) last_energy_ns = now;
    sample_gpus(current, {.slow = full, .occasional = full && occasional, .energy = energy});
}

void Sampler::State::sample_gpus(SamplePhase current, const NvmlReadSet& set) {
    for (const int i : gpu_indices) {
        GpuSample sample;
        sample.t_ns = monotonic_ns();
        sample.phase = current;
        sample.gpu_index = i;
        gpu.nvml->read(i, sample, tree_pids, set);
        {
            const std::lock_guard lock(pcie_mutex);
            if (auto& fresh = pcie_fresh[static_cast<std::size_t>(i)]) {
                sample.pcie_tx_kib_s = fresh->tx_kib_s;
                sample.pcie_rx_kib_s = fresh->rx_kib_s;
                fresh.reset();
            }
        }
        result.gpu.push_back(sample);
    }
}

void Sampler::State::run_pcie() {
    while (!stopping.load()) {
        const std::int64_t round_start = monotonic_ns();
        bool any = false;
        for (const int i : gpu_indices) {
            if (stopping.load()) break;
            const PcieThroughput reading = gpu.nvml->read_pcie(i);
            if (!reading.tx_kib_s && !reading.rx_kib_s) continue;
            any = true;
            const std::lock_guard lock(pcie_mutex);
            pcie_fresh[static_cast<std::size_t>(i)] = reading;
        }
        if (!any) {  // unsupported on every GPU: nothing more to ask
            bool all_off = true;
            for (const int i : gpu_indices) all_off = all_off && !gpu.nvml->pcie_supported(i);
            if (all_off) break;
        }
        wait_until(round_start + std::max(period_ns, kPcieReadNs), {stop_fd.get()});
    }
    pcie_cpu_ns = thread_cpu_ns();
}

// The first round was taken by start(), on the caller's thread.
void Sampler::State::run() {
    if (!gpu.smi_fields.empty()) start_smi();
    std::int64_t next = started_ns;
    while (!stopping.load()) {
        if (result.rounds > 0) sample_round();
        ++result.rounds;
        next += round_ns;
        // Absolute deadlines: a late round does not shift the ones after it; deadlines already past
        // are skipped and counted.
        if (const std::int64_t now = monotonic_ns(); now >= next) {
            const std::int64_t behind = (now - next) / round_ns + 1;
            result.missed_rounds += behind;
            next += behind * round_ns;
        }
        while (!stopping.load()) {
            const int smi_fd = smi ? smi->stdout_pipe().get() : -1;
            const auto ready = wait_until(next, {stop_fd.get(), smi_fd});
            if (smi && std::find(ready.begin(), ready.end(), smi_fd) != ready.end()) read_smi();
            if (ready.empty() && monotonic_ns() >= next) break;
        }
    }
    if (smi) read_smi();
    std::vector<TelemetrySource> sources = gpu_sources();
    if (tree->root_seen())
        sources.push_back(source("procfs", true, fmt::format("worker pid {} and its descendants", pid)));
    else
        sources.push_back(source("procfs", false, fmt::format("{}/{}/stat could not be read", options.proc_root.string(), pid)));
    sources.push_back(rapl->available() ? source("rapl", true, rapl->describe()) : source("rapl", false, rapl->unavailable_reason()));
    result.sources = std::move(sources);
    result.thread_cpu_ns += thread_cpu_ns();
}

std::vector<TelemetrySource> Sampler::State::gpu_sources() const {
    std::vector<TelemetrySource> sources;
    for (TelemetrySource s : gpu.sources) {
        if (s.status == "ok" && s.source == "nvml") {
            std::vector<std::string> parts = {fmt::format("{} GPU{}{}", gpu.nvml->device_count(),
                                                          gpu.nvml->device_count() == 1 ? "" : "s",
                                                          gpu.nvml->driver_version().empty() ? "" : ", driver " + gpu.nvml->driver_version())};
            const auto notes = gpu.nvml->notes();
            parts.insert(parts.end(), notes.begin(), notes.end());
            s.detail = join(parts, "; ");
        } else if (s.status == "ok" && s.source == "nvidia-smi") {
            if (!smi_failure.empty() && smi_lines == 0) s = source("nvidia-smi", false, smi_failure);
            else s.detail = fmt::format("{} lines ({} rejected), fields {}{}", smi_lines, smi_rejected, join(gpu.smi_fields, ","),
                                        smi_failure.empty() ? "" : "; " + smi_failure);
        }
        sources.push_back(std::move(s));
    }
    return sources;
}

Sampler::Sampler(const GpuAccess& gpu, SamplerOptions options) : state_(std::make_unique<State>(gpu, std::move(options))) {
    const double rate = std::clamp(state_->options.rate_hz, 0.001, 1000.0);
    state_->period_ns = static_cast<std::int64_t>(std::llround(1e9 / rate));
    // Without NVML nothing needs reading between the CPU side's 100 ms (nvidia-smi lines are taken as
    // they come): no waking up for nothing.
    state_->round_ns = gpu.nvml ? state_->period_ns : std::max(state_->period_ns, kRoundWithoutNvmlNs);
}

Sampler::~Sampler() {
    if (state_ && state_->thread.joinable()) stop();
}

void Sampler::start(int pid) {
    State& s = *state_;
    if (s.thread.joinable() || s.stopped) throw EnvironmentError("telemetry sampler started twice");
    s.pid = pid;
    s.stop_fd = UniqueFd(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!s.stop_fd) throw EnvironmentError(fmt::format("telemetry sampler: eventfd: {}", std::strerror(errno)));
    const double rounds = static_cast<double>(s.options.expected_ns) / static_cast<double>(s.round_ns) + 16;
    const auto reserve = static_cast<std::size_t>(std::min<double>(rounds, kMaxReservedRounds));
    s.result.cpu.reserve(reserve);
    const int gpus = s.gpu.nvml ? s.gpu.nvml->device_count() : 0;
    for (int i = 0; i < gpus; ++i)
        if (!s.options.gpus || std::find(s.options.gpus->begin(), s.options.gpus->end(), i) != s.options.gpus->end())
            s.gpu_indices.push_back(i);
    s.result.gpu.reserve(reserve * std::max<std::size_t>(s.gpu_indices.size(), 1));
    s.pcie_fresh.resize(static_cast<std::size_t>(gpus));
    // The first round here, so that a worker that loads in a few milliseconds still has its load sample.
    const std::int64_t cpu_before = thread_cpu_ns();
    s.started_ns = monotonic_ns();
    s.tree.emplace(pid, s.options.proc_root);
    s.host.emplace(s.options.proc_root);
    s.rapl.emplace(s.options.powercap_root);
    s.sample_round();
    s.result.thread_cpu_ns = s.result.first_round_cpu_ns = thread_cpu_ns() - cpu_before;
    s.thread = std::thread([&s] { s.run(); });
    if (s.gpu.nvml && !s.gpu_indices.empty()) s.pcie_thread = std::thread([&s] { s.run_pcie(); });
}

void Sampler::set_phase(SamplePhase phase) { state_->phase.store(phase, std::memory_order_relaxed); }

SamplerResult Sampler::stop() {
    State& s = *state_;
    if (s.stopped) throw EnvironmentError("telemetry sampler stopped twice");
    s.stopped = true;
    if (!s.thread.joinable()) return {};
    s.stopping.store(true);
    const std::uint64_t one = 1;
    if (write(s.stop_fd.get(), &one, sizeof(one)) < 0) {
        // Cannot happen with a valid eventfd; the threads also see `stopping` within one period.
    }
    s.thread.join();
    if (s.pcie_thread.joinable()) s.pcie_thread.join();
    // A last reading of what changes fastest (power, SM clock, clock-event reasons), so that what ran
    // after the last round has a sample after it (analysis/throttle_flags judges iterations by the
    // samples around them).
    if (s.gpu.nvml) {
        s.sample_gpus(s.phase.load(std::memory_order_relaxed), {.slow = false, .occasional = false, .energy = false});
        ++s.result.rounds;
    }
    s.smi.reset();
    s.result.thread_cpu_ns += s.pcie_cpu_ns.load();
    s.result.wall_ns = monotonic_ns() - s.started_ns;
    return std::move(s.result);
}

}  // namespace inferbench::telemetry
