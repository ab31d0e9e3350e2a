// The CUDA side of a cell's measure conditions, set up in its worker: how the CPU waits for the GPU
// (sync: the primary context's scheduling flags, set before the backend creates its context) and the
// GPU's L2 flushed between iterations (l2_flush). Through the CUDA driver, libcuda.so.1, opened with
// dlopen only when a cell asks for one of them, so a worker without CUDA runs every other cell. Every
// driver call goes through DriverTable, so tests hand in a fake one.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"
#include "runner/worker/measure_loop.hpp"

namespace inferbench::runner::cuda_driver {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUdeviceptr = unsigned long long;
using CUstream = void*;

inline constexpr int kAttributeL2CacheSize = 38;  // CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE
inline constexpr unsigned kSchedMask = 0x07;      // CU_CTX_SCHED_MASK

// CU_CTX_SCHED_AUTO (0), _SPIN (1), _YIELD (2), _BLOCKING_SYNC (4).
unsigned sched_flags(SyncMode mode);
// "spin", "yield", "blocking", "auto" for the scheduling bits of `flags`.
std::string sched_name(unsigned flags);

// The driver functions used, with cuda.h's signatures (versioned symbols as cuda.h maps them).
struct DriverTable {
    CUresult (*init)(unsigned);                                    // cuInit
    CUresult (*device_get)(CUdevice*, int);                        // cuDeviceGet
    CUresult (*device_get_attribute)(int*, int, CUdevice);         // cuDeviceGetAttribute
    CUresult (*primary_ctx_retain)(CUcontext*, CUdevice);          // cuDevicePrimaryCtxRetain
    CUresult (*primary_ctx_release)(CUdevice);                     // cuDevicePrimaryCtxRelease_v2
    CUresult (*primary_ctx_set_flags)(CUdevice, unsigned);         // cuDevicePrimaryCtxSetFlags_v2
    CUresult (*primary_ctx_get_state)(CUdevice, unsigned*, int*);  // cuDevicePrimaryCtxGetState
    CUresult (*ctx_push_current)(CUcontext);                       // cuCtxPushCurrent_v2
    CUresult (*ctx_pop_current)(CUcontext*);                       // cuCtxPopCurrent_v2
    CUresult (*ctx_synchronize)();                                 // cuCtxSynchronize
    CUresult (*mem_alloc)(CUdeviceptr*, std::size_t);              // cuMemAlloc_v2
    CUresult (*mem_free)(CUdeviceptr);                             // cuMemFree_v2
    CUresult (*memset_d8_async)(CUdeviceptr, unsigned char, std::size_t, CUstream);  // cuMemsetD8Async
    CUresult (*get_error_string)(CUresult, const char**);          // cuGetErrorString
};

// $INFERBENCH_CUDA_DRIVER_LIBRARY where set, else "libcuda.so.1".
std::string driver_library_path();
// The driver's table, opened once; throws std::runtime_error saying why it cannot be
// ("libcuda.so.1: cannot open shared object file ...", a function missing).
const DriverTable& require_driver();

// Throws std::runtime_error "CUDA <call> failed: <the driver's message> (error N)" for a nonzero result.
void check(const DriverTable& cuda, CUresult result, const char* call);

struct SyncSetting {
    unsigned flags_before = 0;        // the primary context's flags found
    bool context_was_active = false;  // the context existed already (the new flags still apply: since
                                      // CUDA 11 cuDevicePrimaryCtxSetFlags changes an active context's flags)
};

// Sets the scheduling flags of GPU `device`'s primary context to `mode`'s, keeping its other flags.
SyncSetting set_sync_mode(const DriverTable& cuda, int device, SyncMode mode);
// The primary context's flags now; throws where their scheduling part is not `mode`'s (a backend that
// created its context with flags of its own).
unsigned check_sync_mode(const DriverTable& cuda, int device, SyncMode mode);

// Evicts what the last iteration left in the GPU's L2: writes a device buffer of twice the L2 size
// (cuMemsetD8Async on the null stream) and waits for it (cuCtxSynchronize), in the GPU's primary context.
// The buffer is allocated once, when constructed.
class L2Flush final : public BetweenIterations {
public:
    L2Flush(const DriverTable& cuda, int device);
    ~L2Flush() override;
    L2Flush(const L2Flush&) = delete;
    L2Flush& operator=(const L2Flush&) = delete;

    void run() override;
    std::size_t bytes() const { return bytes_; }

private:
    const DriverTable& cuda_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    CUdeviceptr buffer_ = 0;
    std::size_t bytes_ = 0;
    unsigned char value_ = 0;
};

}  // namespace inferbench::runner::cuda_driver

namespace inferbench::runner {

// A cell's CUDA conditions through its worker's life: the sync mode when constructed (before the backend
// exists), then after the backend's load and prepare the check that it held and the L2 flush's buffer.
// Nothing at all for a CPU cell or a cell that asks for neither; the driver is opened only when needed.
class CudaConditions {
public:
    // `table`: the driver to use; nullptr opens libcuda.so.1 when a condition needs it.
    explicit CudaConditions(const BenchmarkSpec& spec, const cuda_driver::DriverTable* table = nullptr);
    ~CudaConditions();

    // What the worker stores with the benchmark (core/metrics/harness_metrics): the flags read back, the bytes
    // flushed per iteration. Throws where the sync mode did not hold or the flush cannot be set up.
    std::vector<BackendMetric> after_prepare();
    // The flush to run between iterations, or nullptr.
    BetweenIterations* between() { return flush_.get(); }

private:
    const cuda_driver::DriverTable& driver();

    MeasureConditions conditions_;
    int device_ = 0;
    const cuda_driver::DriverTable* table_ = nullptr;
    std::optional<cuda_driver::SyncSetting> sync_;
    std::unique_ptr<cuda_driver::L2Flush> flush_;
};

}  // namespace inferbench::runner
