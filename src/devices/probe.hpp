// Measured ceilings. CPU: FMA throughput of every core (the widest vector unit this CPU has, chosen at
// run time) and memory bandwidth (copy, triad). GPU: the CUDA probe module (libinferbench_probe_cuda.so,
// opened with dlopen): CUDA-core FMA peaks, DRAM and L2 bandwidth, cuBLASLt GEMM peaks per precision.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace inferbench::devices {

// One figure a probe measured, or why it could not (then value is 0).
struct ProbeMeasurement {
    std::string name;       // "gemm_bf16", "fma_fp32", "dram_copy", ...
    double value = 0;       // in unit
    std::string unit;       // "TFLOP/s", "TOPS", "GB/s"
    std::string precision;  // "bf16"; "" for bandwidths
    bool dense = true;
    double work = 0;     // operations or bytes of one timed run
    double seconds = 0;  // the best time of one run
    int m = 0, n = 0, k = 0;
    std::string detail;
    std::string skipped;  // non-empty: not measured, and why

    std::string details_json() const;  // work, seconds, shape, dense, detail: what the store keeps beside the value
};

// ---- CPU ----
struct CpuProbeOptions {
    std::int64_t array_bytes = std::int64_t{256} << 20;  // each of the copy / triad arrays
    int threads = 0;                                     // 0: one per CPU this process may run on
    int repetitions = 3;                                 // best kept
    double target_seconds = 0.2;                         // length of one timed FMA run
    bool fma = true;                                     // fma_fp32, fma_fp64
    bool memory = true;                                  // dram_copy, dram_triad
};
// fma_fp32, fma_fp64 (in TFLOP/s), dram_copy, dram_triad (GB/s), as the options select.
std::vector<ProbeMeasurement> probe_cpu(const CpuProbeOptions& options);
// Arrays well beyond the caches (STREAM's rule: 4 x the last-level cache), at least 256 MiB each.
std::int64_t default_cpu_array_bytes();
inline const std::vector<std::string>& cpu_probe_names() {
    static const std::vector<std::string> names = {"fma_fp32", "fma_fp64", "dram_copy", "dram_triad"};
    return names;
}
// The instruction set the FMA probe uses here: "AVX-512", "AVX2+FMA", "SSE2" or "portable C++".
std::string cpu_probe_isa();

// ---- GPU ----
struct GpuIdentityInfo {
    int index = 0;  // CUDA ordinal
    std::string name, uuid, pci_bus_id;
    int compute_major = 0, compute_minor = 0, multiprocessors = 0;
    std::int64_t memory_bytes = 0, l2_bytes = 0;
    int max_sm_clock_khz = 0;
};

struct GpuProbeRequest {
    int device = 0;
    std::string probes = "all";  // comma-separated names, or "all"
    std::string cublaslt_library;
    std::int64_t dram_bytes = 0;  // 0: the module's default (1 GiB per array)
    std::int64_t l2_bytes = 0;    // 0: 40% of the L2
    int gemm_size = 0;            // 0: 8192
    int repetitions = 0;          // 0: 5
};

// Every probe the module knows, in its order.
const std::vector<std::string>& gpu_probe_names();

class CudaProbeModule {
public:
    // $INFERBENCH_PROBE_MODULE, else libinferbench_probe_cuda.so next to the executable, then in
    // <exe dir>/../lib/inferbench.
    static std::vector<std::filesystem::path> default_candidates();
    // Throws EnvironmentError saying what was tried and why each failed.
    static std::unique_ptr<CudaProbeModule> open(const std::vector<std::filesystem::path>& candidates);

    CudaProbeModule(const CudaProbeModule&) = delete;
    CudaProbeModule& operator=(const CudaProbeModule&) = delete;
    ~CudaProbeModule();

    const std::filesystem::path& path() const { return path_; }
    int device_count() const;  // throws EnvironmentError (no driver, no GPU)
    GpuIdentityInfo device(int index) const;
    std::vector<ProbeMeasurement> run(const GpuProbeRequest& request) const;

private:
    CudaProbeModule() = default;
    struct Api;
    void* handle_ = nullptr;
    std::filesystem::path path_;
    std::unique_ptr<Api> api_;
};

}  // namespace inferbench::devices
