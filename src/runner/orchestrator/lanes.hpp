// `parallel: per_device`: a plan's benchmarks split into one lane per device, every lane at once, each running its
// benchmarks one at a time in plan order; where each lane's worker is pinned; and which benchmarks of the run
// overlapped in time on other devices (BenchmarkRecord::concurrent). Never two benchmarks on one GPU at once.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/samples.hpp"
#include "store/results_store.hpp"
#include "telemetry/nvml.hpp"

namespace inferbench::runner {

// One device's share of the run: positions in the run's order (ascending, so its cells keep their plan order
// and their repeats' interleaving).
struct Lane {
    Device device;
    std::vector<std::size_t> positions;
};

// The lanes of `order`, in the order of each device's first benchmark.
std::vector<Lane> split_into_lanes(std::span<const BenchmarkSpec> cells, std::span<const CellRepeat> order);

// Where a worker runs: the CPUs it is pinned to (empty: not pinned) and the memory node its pages prefer.
struct WorkerPlacement {
    std::vector<int> cpus;
    std::optional<int> memory_node;
    std::string not_pinned;        // why the worker is not pinned, where it is not and per_device asked for it
    std::string no_memory_node;    // why no memory node is preferred, where pinned by NVML's answer
    std::string chosen_by;         // "the plan's cpu_affinity", "nearest GPU 0 (NVML)", ...
};

// The placement as the benchmark's telemetry source "pinning" (ok: where the worker ran; unavailable: why it was
// not pinned), so a reader of the store can tell.
TelemetrySource pinning_source(const WorkerPlacement& placement);

// Each device's placement: the plan's cpu_affinity where it names the device (no memory node: the plan's CPUs may
// span nodes); else under per_device a GPU's nearest CPUs (NVML) and memory node (sysfs), and the cpu device's the
// allowed CPUs no GPU lane takes (none left: not pinned). Every set is cut to `allowed` (the CPUs this process may
// use; check_plan refuses a plan's CPU outside them).
std::map<Device, WorkerPlacement> worker_placements(const Plan& plan, std::span<const Device> devices, bool per_device,
                                                    const telemetry::Nvml* nvml, std::span<const int> allowed);

// The run's benchmarks on the clock as they begin and end, from any lane's thread. A benchmark's `concurrent` is
// known when it ends: every benchmark that overlapped it has begun by then.
class ConcurrencyLog {
public:
    std::size_t begin(std::int64_t ordinal, std::int64_t repeat, std::string device, std::int64_t now_ns);
    // The benchmarks on other devices whose time overlapped this one's; a skipped one (it ran nothing) is left out
    // of the lists that end after it was known skipped.
    std::vector<store::ConcurrentBenchmark> end(std::size_t handle, std::int64_t now_ns, bool skipped);

private:
    struct Entry {
        store::ConcurrentBenchmark benchmark;
        std::int64_t begin_ns = 0;
        std::optional<std::int64_t> end_ns;
        bool skipped = false;
    };
    std::mutex mutex_;
    std::vector<Entry> entries_;
};

}  // namespace inferbench::runner
