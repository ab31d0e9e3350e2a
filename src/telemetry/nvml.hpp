// NVML, opened at run time (never linked, so inferbench runs where there is no driver): the GPUs'
// identity and one reading of every metric a GpuSample holds. NVML is thread-safe; one Nvml object is
// meant to be used by one sampler thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/samples.hpp"
#include "telemetry/gpu_inventory.hpp"

namespace inferbench::telemetry {

// $INFERBENCH_NVML_LIBRARY where set (the tests point it at a fake), else "libnvidia-ml.so.1".
std::string nvml_library_path();

// What the NVML calls of one metric cost, where profiling was switched on (bench/telemetry_cost).
struct NvmlCallCost {
    std::string metric;  // "SM clock"; the field-value query (instant/average power, memory temperature) is "field values"
    std::int64_t calls = 0;
    std::int64_t cpu_ns = 0;   // the calling thread's CPU time
    std::int64_t wall_ns = 0;
};

struct PcieThroughput {
    std::optional<double> tx_kib_s;
    std::optional<double> rx_kib_s;
};

// Which of the slower metrics one Nvml::read asks for (each what samplers read at most every so often,
// to keep 100 Hz cheap); all of them by default.
struct NvmlReadSet {
    // Those that change slowly or that the driver itself updates at most every 1/6 s: the 1 s average
    // power, utilisation, GPU and memory temperature, memory and graphics clocks, P-state. Samplers:
    // every 100 ms.
    bool slow = true;
    // The power limit, framebuffer use and the worker's own GPU memory (a process-list query), which
    // change with allocations and cost tens of microseconds each. Samplers: every second.
    bool occasional = true;
    // The total energy counter, which costs 3-13 ms of CPU per call on an H200 (driver 580). Samplers:
    // at phase changes and every 30 s.
    bool energy = true;
};

class Nvml {
public:
    // Loads `library` and initialises NVML. Throws EnvironmentError with the reason when it cannot:
    // "libnvidia-ml.so.1: cannot open shared object file: ...", "nvmlInit_v2: Driver Not Loaded".
    static std::unique_ptr<Nvml> open(const std::string& library = nvml_library_path());

    Nvml(const Nvml&) = delete;
    Nvml& operator=(const Nvml&) = delete;
    ~Nvml();  // nvmlShutdown, dlclose

    const std::string& library() const;
    int device_count() const;
    const std::string& driver_version() const;  // empty where NVML does not say
    GpuIdentity identity(int index) const;

    // Fills the metrics of GPU `index` into `sample` (t_ns, phase and gpu_index stay the caller's):
    // instant power, SM clock and clock-event reasons always; the others as `set` says (see NvmlReadSet).
    // PCIe: read_pcie. A metric this GPU or driver does not support stays empty and is not asked for
    // again; other failures leave it empty for this sample. process_fb_mib is the GPU memory of the
    // processes in `pids` (absent when none of them is in the GPU's process list).
    void read(int index, GpuSample& sample, std::span<const int> pids, const NvmlReadSet& set = {});
    // PCIe throughput: NVML counts bytes over 20 ms inside each call, so the call blocks that long;
    // samplers make it on a thread of its own.
    PcieThroughput read_pcie(int index);
    // False once both PCIe directions proved unsupported on GPU `index`.
    bool pcie_supported(int index) const;

    // The CPUs nearest GPU `index` (nvmlDeviceGetCpuAffinity), ascending; empty with `why` set where NVML does not
    // say.
    std::vector<int> cpu_affinity(int index, std::string& why) const;

    // Profiling: each call's thread CPU and wall time summed per metric (costs two clock reads per call).
    void set_profiling(bool on);
    std::vector<NvmlCallCost> call_costs() const;  // metrics called at least once

    // What could not be read, once per GPU and metric: "GPU 1 memory temperature: Not Supported".
    std::vector<std::string> notes() const;

private:
    struct Impl;
    explicit Nvml(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace inferbench::telemetry
