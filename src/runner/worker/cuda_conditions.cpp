#include "runner/worker/cuda_conditions.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>

#include "core/dl_symbol.hpp"
#include "core/metrics/harness_metrics.hpp"

namespace inferbench::runner::cuda_driver {
namespace {

struct Loaded {
    DriverTable table{};
    std::string problem;
};

Loaded load() {
    Loaded loaded;
    const std::string path = driver_library_path();
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
        const char* why = dlerror();
        loaded.problem = fmt::format("cannot load the CUDA driver: {}", why ? why : path);
        return loaded;
    }
    DriverTable& t = loaded.table;
    std::string& p = loaded.problem;
    resolve_symbol(handle, path, "cuInit", t.init, p);
    resolve_symbol(handle, path, "cuDeviceGet", t.device_get, p);
    resolve_symbol(handle, path, "cuDeviceGetAttribute", t.device_get_attribute, p);
    resolve_symbol(handle, path, "cuDevicePrimaryCtxRetain", t.primary_ctx_retain, p);
    resolve_symbol(handle, path, "cuDevicePrimaryCtxRelease_v2", t.primary_ctx_release, p);
    resolve_symbol(handle, path, "cuDevicePrimaryCtxSetFlags_v2", t.primary_ctx_set_flags, p);
    resolve_symbol(handle, path, "cuDevicePrimaryCtxGetState", t.primary_ctx_get_state, p);
    resolve_symbol(handle, path, "cuCtxPushCurrent_v2", t.ctx_push_current, p);
    resolve_symbol(handle, path, "cuCtxPopCurrent_v2", t.ctx_pop_current, p);
    resolve_symbol(handle, path, "cuCtxSynchronize", t.ctx_synchronize, p);
    resolve_symbol(handle, path, "cuMemAlloc_v2", t.mem_alloc, p);
    resolve_symbol(handle, path, "cuMemFree_v2", t.mem_free, p);
    resolve_symbol(handle, path, "cuMemsetD8Async", t.memset_d8_async, p);
    resolve_symbol(handle, path, "cuGetErrorString", t.get_error_string, p);
    return loaded;
}

// The driver initialised and GPU `index` as its device.
CUdevice device_of(const DriverTable& cuda, int index) {
    check(cuda, cuda.init(0), "cuInit");
    CUdevice device = 0;
    check(cuda, cuda.device_get(&device, index), "cuDeviceGet");
    return device;
}

}  // namespace

unsigned sched_flags(SyncMode mode) {
    switch (mode) {
        case SyncMode::automatic: return 0x0;
        case SyncMode::spin: return 0x1;
        case SyncMode::yield: return 0x2;
        case SyncMode::blocking: return 0x4;
    }
    return 0x0;
}

std::string sched_name(unsigned flags) {
    for (const SyncMode mode : {SyncMode::automatic, SyncMode::spin, SyncMode::yield, SyncMode::blocking})
        if ((flags & kSchedMask) == sched_flags(mode)) return std::string(to_string(mode));
    return fmt::format("flags 0x{:x}", flags & kSchedMask);
}

std::string driver_library_path() {
    if (const char* path = std::getenv("INFERBENCH_CUDA_DRIVER_LIBRARY"); path && *path) return path;
    return "libcuda.so.1";
}

const DriverTable& require_driver() {
    static const Loaded loaded = load();
    if (!loaded.problem.empty()) throw std::runtime_error(loaded.problem);
    return loaded.table;
}

void check(const DriverTable& cuda, CUresult result, const char* call) {
    if (result == 0) return;
    const char* text = nullptr;
    if (cuda.get_error_string == nullptr || cuda.get_error_string(result, &text) != 0 || text == nullptr)
        text = "unknown error";
    throw std::runtime_error(fmt::format("CUDA {} failed: {} (error {})", call, text, result));
}

SyncSetting set_sync_mode(const DriverTable& cuda, int index, SyncMode mode) {
    const CUdevice device = device_of(cuda, index);
    SyncSetting found;
    int active = 0;
    check(cuda, cuda.primary_ctx_get_state(device, &found.flags_before, &active), "cuDevicePrimaryCtxGetState");
    found.context_was_active = active != 0;
    const unsigned flags = (found.flags_before & ~kSchedMask) | sched_flags(mode);
    check(cuda, cuda.primary_ctx_set_flags(device, flags), "cuDevicePrimaryCtxSetFlags");
    return found;
}

unsigned check_sync_mode(const DriverTable& cuda, int index, SyncMode mode) {
    const CUdevice device = device_of(cuda, index);
    unsigned flags = 0;
    int active = 0;
    check(cuda, cuda.primary_ctx_get_state(device, &flags, &active), "cuDevicePrimaryCtxGetState");
    if ((flags & kSchedMask) != sched_flags(mode))
        throw std::runtime_error(fmt::format("sync {} did not hold: GPU {}'s primary context waits with {} after the "
                                             "backend loaded (the backend set its own scheduling flags)",
                                             to_string(mode), index, sched_name(flags)));
    return flags;
}

L2Flush::L2Flush(const DriverTable& cuda, int index) : cuda_(cuda), device_(device_of(cuda, index)) {
    int l2_bytes = 0;
    check(cuda_, cuda_.device_get_attribute(&l2_bytes, kAttributeL2CacheSize, device_),
          "cuDeviceGetAttribute(L2 cache size)");
    if (l2_bytes <= 0)
        throw std::runtime_error(fmt::format("GPU {} reports no L2 cache size: l2_flush cannot size its buffer", index));
    bytes_ = 2 * static_cast<std::size_t>(l2_bytes);
    check(cuda_, cuda_.primary_ctx_retain(&context_, device_), "cuDevicePrimaryCtxRetain");
    try {
        check(cuda_, cuda_.ctx_push_current(context_), "cuCtxPushCurrent");
        const CUresult allocated = cuda_.mem_alloc(&buffer_, bytes_);
        CUcontext popped = nullptr;
        cuda_.ctx_pop_current(&popped);
        check(cuda_, allocated, "cuMemAlloc");
    } catch (...) {
        cuda_.primary_ctx_release(device_);
        throw;
    }
}

L2Flush::~L2Flush() {
    if (cuda_.ctx_push_current(context_) == 0) {
        cuda_.mem_free(buffer_);
        CUcontext popped = nullptr;
        cuda_.ctx_pop_current(&popped);
    }
    cuda_.primary_ctx_release(device_);
}

void L2Flush::run() {
    check(cuda_, cuda_.ctx_push_current(context_), "cuCtxPushCurrent");
    // A different byte each time, so no write is a no-op to any layer that could tell.
    CUresult result = cuda_.memset_d8_async(buffer_, ++value_, bytes_, nullptr);
    if (result == 0) result = cuda_.ctx_synchronize();
    CUcontext popped = nullptr;
    cuda_.ctx_pop_current(&popped);
    check(cuda_, result, "cuMemsetD8Async/cuCtxSynchronize (L2 flush)");
}

}  // namespace inferbench::runner::cuda_driver

namespace inferbench::runner {

CudaConditions::CudaConditions(const BenchmarkSpec& spec, const cuda_driver::DriverTable* table)
    : conditions_(spec.conditions), device_(spec.device.index), table_(table) {
    if (spec.device.kind != DeviceKind::cuda) {
        conditions_.l2_flush = false;
        conditions_.sync = SyncMode::automatic;
    }
    if (conditions_.sync == SyncMode::automatic) return;
    try {
        sync_ = cuda_driver::set_sync_mode(driver(), device_, conditions_.sync);
    } catch (const std::exception& e) {
        throw std::runtime_error(fmt::format("sync {}: {}", to_string(conditions_.sync), e.what()));
    }
}

CudaConditions::~CudaConditions() = default;

const cuda_driver::DriverTable& CudaConditions::driver() {
    if (table_ == nullptr) table_ = &cuda_driver::require_driver();
    return *table_;
}

std::vector<BackendMetric> CudaConditions::after_prepare() {
    std::vector<BackendMetric> metrics;
    if (sync_) {
        const unsigned flags = cuda_driver::check_sync_mode(driver(), device_, conditions_.sync);
        metrics.push_back({std::string(harness_metrics::kCudaSchedFlags), static_cast<double>(flags & cuda_driver::kSchedMask), "flags"});
        metrics.push_back({std::string(harness_metrics::kCudaContextWasActive), sync_->context_was_active ? 1.0 : 0.0, "flag"});
    }
    if (conditions_.l2_flush) {
        try {
            flush_ = std::make_unique<cuda_driver::L2Flush>(driver(), device_);
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("l2_flush: {}", e.what()));
        }
        metrics.push_back({std::string(harness_metrics::kL2FlushBytes), static_cast<double>(flush_->bytes()), "B"});
    }
    return metrics;
}

}  // namespace inferbench::runner
