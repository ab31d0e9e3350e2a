// The cost of telemetry sampling: CPU time of the sampler's threads (CLOCK_THREAD_CPUTIME_ID, read by
// each thread as it ends) per round and as a share of one core in the steady state (the first round,
// which reads every metric once, printed apart: a cost per benchmark), at 10 and 100 Hz, sampling a process
// of 32 threads (a framework worker's order) with: no GPU source (procfs and the host only), the fake
// libnvidia-ml of the tests (where this build has it), and the real NVML (libnvidia-ml.so.1, or
// $INFERBENCH_NVML_LIBRARY) where it opens; then, for each NVML configuration, a profiled run at
// 100 Hz that prints what each NVML call costs. Target: < 1% of one core at 100 Hz.
//
//   build/release/bench/telemetry_cost [SECONDS per configuration, default 3]
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "core/process/subprocess.hpp"
#include "telemetry/sampler.hpp"

namespace inferbench {
namespace {

constexpr int kThreads = 32;

// The sampled process: threads that wait forever, as a framework's idle pool does.
[[noreturn]] void idle_threads(int count) {
    std::mutex mutex;
    std::condition_variable never;
    std::vector<std::thread> threads;
    for (int i = 0; i < count; ++i)
        threads.emplace_back([&] {
            std::unique_lock lock(mutex);
            never.wait(lock, [] { return false; });
        });
    pause();
    std::_Exit(0);
}

struct Config {
    std::string label;
    telemetry::GpuMode mode;
    std::string library;
};

// Per NVML metric: calls, CPU and wall time per call, and the share of one core, for this configuration.
void print_call_costs(const std::vector<telemetry::NvmlCallCost>& before, const std::vector<telemetry::NvmlCallCost>& after,
                      std::int64_t wall_ns) {
    for (const auto& cost : after) {
        telemetry::NvmlCallCost delta = cost;
        for (const auto& earlier : before) {
            if (earlier.metric != cost.metric) continue;
            delta.calls -= earlier.calls;
            delta.cpu_ns -= earlier.cpu_ns;
            delta.wall_ns -= earlier.wall_ns;
        }
        if (delta.calls <= 0) continue;
        fmt::print("    {:<22} {:>6} calls  {:>9.1f} us CPU/call  {:>9.1f} us wall/call  {:>6.3f}% of one core\n", delta.metric,
                   delta.calls, static_cast<double>(delta.cpu_ns) / 1e3 / static_cast<double>(delta.calls),
                   static_cast<double>(delta.wall_ns) / 1e3 / static_cast<double>(delta.calls),
                   100.0 * static_cast<double>(delta.cpu_ns) / static_cast<double>(std::max<std::int64_t>(wall_ns, 1)));
    }
}

// One configuration at one rate. `profiled`: each NVML call timed as well (two clock reads per call,
// which add to the cost measured), and the per-call costs printed; the headline figures come from runs
// without it.
void measure(const Config& config, double rate_hz, double seconds, int pid, bool profiled) {
    const telemetry::GpuAccess access = telemetry::open_gpu_access(config.mode, config.library);
    if (config.mode != telemetry::GpuMode::off && !access.nvml) {
        fmt::print("{:<34} {:>5} Hz  not run: {}\n", config.label, rate_hz, access.sources.front().detail);
        return;
    }
    if (access.nvml) access.nvml->set_profiling(profiled);
    const auto before = access.nvml ? access.nvml->call_costs() : std::vector<telemetry::NvmlCallCost>{};
    telemetry::Sampler sampler(access, {.rate_hz = rate_hz, .expected_ns = static_cast<std::int64_t>(seconds * 1e9)});
    sampler.start(pid);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    const telemetry::SamplerResult r = sampler.stop();
    // Steady state: every round after the first, which reads every metric once (the energy counter too,
    // milliseconds of CPU on some drivers) and is a cost per benchmark, not per second.
    const std::int64_t steady_ns = r.thread_cpu_ns - r.first_round_cpu_ns;
    const double per_round_us = static_cast<double>(steady_ns) / 1e3 / static_cast<double>(std::max<std::int64_t>(r.rounds - 1, 1));
    const double core_pct = 100.0 * static_cast<double>(steady_ns) / static_cast<double>(r.wall_ns);
    fmt::print("{:<34} {:>5} Hz  {:>6} rounds  {:>4} missed  {:>6} GPU samples  {:>8.1f} us/round  {:>6.3f}% of one core"
               "  (first round {:.2f} ms; {:.3f}% with it){}\n",
               config.label, rate_hz, r.rounds, r.missed_rounds, r.gpu.size(), per_round_us, core_pct,
               static_cast<double>(r.first_round_cpu_ns) / 1e6,
               100.0 * static_cast<double>(r.thread_cpu_ns) / static_cast<double>(r.wall_ns),
               profiled ? "  profiled, per call:" : "");
    if (access.nvml && profiled) print_call_costs(before, access.nvml->call_costs(), r.wall_ns);
}
}  // namespace
}  // namespace inferbench

int main(int argc, char** argv) {
    using namespace inferbench;
    if (argc == 3 && std::string(argv[1]) == "--idle-threads") idle_threads(std::atoi(argv[2]));
    const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
    Child target = spawn({"/proc/self/exe", "--idle-threads", std::to_string(kThreads)});
    usleep(200'000);  // its threads started

    std::vector<Config> configs = {{"procfs + host only (no GPU)", telemetry::GpuMode::off, ""}};
#ifdef INFERBENCH_FAKE_NVML
    // The fake answers from memory (its process list is this process alone, no /proc scan): what is
    // measured is inferbench's own cost around 15 NVML calls per GPU per round, 2 GPUs.
    const auto script = std::filesystem::temp_directory_path() / fmt::format("telemetry-cost-{}.txt", getpid());
    std::ofstream(script) << "gpu0.processes = self:512\ngpu1.processes = self:256\n";
    setenv("FAKE_NVML_SCRIPT", script.c_str(), 1);
    if (std::filesystem::exists(INFERBENCH_FAKE_NVML))
        configs.push_back({"fake NVML (2 GPUs)", telemetry::GpuMode::nvml, INFERBENCH_FAKE_NVML});
#endif
    const char* override_library = std::getenv("INFERBENCH_NVML_LIBRARY");
    configs.push_back({override_library ? fmt::format("NVML {}", override_library) : "real NVML (libnvidia-ml.so.1)",
                       telemetry::GpuMode::nvml, telemetry::nvml_library_path()});
    fmt::print("telemetry sampling cost, {} s per configuration, sampled process: {} threads (pid {})\n", seconds,
               kThreads + 1, target.pid());
    for (const auto& config : configs) {
        for (const double rate : {10.0, 100.0}) measure(config, rate, seconds, target.pid(), false);
        if (config.mode != telemetry::GpuMode::off) measure(config, 100.0, seconds, target.pid(), true);
    }
#ifdef INFERBENCH_FAKE_NVML
    std::filesystem::remove(script);
#endif
    return 0;
}
