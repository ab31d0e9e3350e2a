#include "backends/onnxruntime/cuda_runtime.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <stdexcept>

#include <fmt/format.h>

#include "core/dl_symbol.hpp"
#include "core/time_units.hpp"

namespace inferbench::cuda {
namespace {

constexpr unsigned kStreamNonBlocking = 1;  // cudaStreamNonBlocking

struct Loaded {
    RuntimeTable table{};
    std::string problem;
};

Loaded load() {
    Loaded loaded;
    void* handle = dlopen(kRuntimeLibrary, RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
        loaded.problem = fmt::format("cannot load the CUDA runtime {}: {}", kRuntimeLibrary, dlerror());
        return loaded;
    }
    RuntimeTable& t = loaded.table;
    std::string& p = loaded.problem;
    resolve_symbol(handle, kRuntimeLibrary, "cudaGetDeviceCount", t.get_device_count, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaSetDevice", t.set_device, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaStreamCreateWithFlags", t.stream_create_with_flags, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaStreamDestroy", t.stream_destroy, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaStreamSynchronize", t.stream_synchronize, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaEventCreate", t.event_create, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaEventRecord", t.event_record, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaEventElapsedTime", t.event_elapsed_time, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaEventDestroy", t.event_destroy, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaMalloc", t.malloc, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaFree", t.free, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaMallocHost", t.malloc_host, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaFreeHost", t.free_host, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaMemcpyAsync", t.memcpy_async, p);
    resolve_symbol(handle, kRuntimeLibrary, "cudaGetErrorString", t.get_error_string, p);
    return loaded;
}

}  // namespace

const RuntimeTable* runtime(std::string& problem) {
    static const Loaded loaded = load();
    problem = loaded.problem;
    return loaded.problem.empty() ? &loaded.table : nullptr;
}

const RuntimeTable& require_runtime() {
    std::string problem;
    const RuntimeTable* table = runtime(problem);
    if (table == nullptr) throw std::runtime_error(problem);
    return *table;
}

StreamHandle::StreamHandle(int device) : cuda_(require_runtime()) {
    check(cuda_, cuda_.set_device(device), "cudaSetDevice");
    check(cuda_, cuda_.stream_create_with_flags(&stream_, kStreamNonBlocking), "cudaStreamCreateWithFlags");
}
StreamHandle::~StreamHandle() { cuda_.stream_destroy(stream_); }
void StreamHandle::synchronize() const { check(cuda_, cuda_.stream_synchronize(stream_), "cudaStreamSynchronize"); }

Buffer::Buffer(Kind kind, std::size_t bytes) : cuda_(require_runtime()), kind_(kind), bytes_(bytes) {
    const std::size_t allocated = bytes == 0 ? 1 : bytes;  // a valid address for an empty tensor too
    if (kind == Kind::device)
        check(cuda_, cuda_.malloc(&data_, allocated), "cudaMalloc");
    else
        check(cuda_, cuda_.malloc_host(&data_, allocated), "cudaMallocHost");
}
Buffer::Buffer(Buffer&& other) noexcept
    : cuda_(other.cuda_), kind_(other.kind_), bytes_(other.bytes_), data_(other.data_) {
    other.data_ = nullptr;
}
Buffer::~Buffer() {
    if (data_ == nullptr) return;
    if (kind_ == Kind::device)
        cuda_.free(data_);
    else
        cuda_.free_host(data_);
}

void copy_async(void* to, const void* from, std::size_t bytes, CopyKind kind, Stream stream) {
    if (bytes == 0) return;
    const RuntimeTable& cuda = require_runtime();
    check(cuda, cuda.memcpy_async(to, from, bytes, static_cast<int>(kind), stream), "cudaMemcpyAsync");
}

}  // namespace inferbench::cuda
