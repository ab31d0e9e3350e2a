// The module's C interface (devices/probe_api.h): device listing and the probe runs.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "devices/probe_api.h"
#include "devices/probe_cuda/cuda_check.hpp"
#include "devices/probe_cuda/probes.hpp"

#define INFERBENCH_PROBE_EXPORT extern "C" __attribute__((visibility("default")))

namespace inferbench::probe_cuda {
namespace {

// Every probe, in the order they run: cheap ones first, the GEMMs (which need cuBLASLt) last.
const std::vector<std::string>& all_probes() {
    static const std::vector<std::string> names = {"fma_fp64",   "fma_fp32",    "fma_fp16x2", "imad_int32", "dram_copy",
                                                   "dram_triad", "dram_memcpy", "l2_read",    "gemm_tf32",  "gemm_fp16",
                                                   "gemm_bf16",  "gemm_fp8",    "gemm_int8"};
    return names;
}

std::vector<std::string> selected(const char* list) {
    if (!list || std::strcmp(list, "all") == 0) return all_probes();
    std::vector<std::string> names;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        if (std::find(all_probes().begin(), all_probes().end(), item) == all_probes().end())
            throw CudaError("unknown probe '" + item + "'");
        names.push_back(item);
    }
    return names;
}

void write_error(char* error, std::size_t size, const std::string& message) {
    if (error && size > 0) std::snprintf(error, size, "%s", message.c_str());
}

template <typename Body>
int guarded(char* error, std::size_t size, Body&& body) {
    try {
        body();
        return 0;
    } catch (const std::exception& e) {
        write_error(error, size, e.what());
    } catch (...) {
        write_error(error, size, "unknown error in the CUDA probe module");
    }
    return 1;
}

void format_uuid(const cudaUUID_t& uuid, char* out, std::size_t size) {
    const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
    std::snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                  b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

ProbeOutput run_one(const ProbeContext& context, const std::string& name, const CublasLtLibrary* cublaslt,
                    const std::string& why_no_cublaslt) {
    if (name.starts_with("fma_") || name == "imad_int32") return probe_fma(context, name);
    if (name.starts_with("dram_")) return probe_dram(context, name);
    if (name == "l2_read") return probe_l2(context);
    return probe_gemm(context, name, cublaslt, why_no_cublaslt);
}

void deliver(const ProbeOutput& out, InferbenchProbeSink sink, void* sink_context) {
    InferbenchProbeMeasurement m{};
    m.name = out.name.c_str();
    m.value = out.value;
    m.unit = out.unit.c_str();
    m.precision = out.precision.c_str();
    m.dense = 1;
    m.work = out.work;
    m.seconds = out.seconds;
    m.m = out.m;
    m.n = out.n;
    m.k = out.k;
    m.detail = out.detail.c_str();
    m.skipped = out.skipped.empty() ? nullptr : out.skipped.c_str();
    sink(sink_context, &m);
}

void run(const InferbenchProbeRequest& request, InferbenchProbeSink sink, void* sink_context) {
    const auto names = selected(request.probes);
    check(cudaSetDevice(request.device), "cudaSetDevice");
    ProbeContext context;
    context.device = request.device;
    check(cudaGetDeviceProperties(&context.properties, request.device), "cudaGetDeviceProperties");
    context.repetitions = request.repetitions > 0 ? request.repetitions : 5;
    context.dram_bytes = static_cast<std::size_t>(request.dram_bytes > 0 ? request.dram_bytes : (1LL << 30));
    context.l2_bytes = static_cast<std::size_t>(std::max(0LL, request.l2_bytes));
    context.gemm_size = request.gemm_size > 0 ? request.gemm_size : 8192;
    Stream stream;
    context.stream = stream.get();
    std::unique_ptr<CublasLtLibrary> cublaslt;
    std::string why_no_cublaslt;
    if (std::any_of(names.begin(), names.end(), is_gemm_probe)) {
        try {
            cublaslt = CublasLtLibrary::open(request.cublaslt_library ? request.cublaslt_library : "");
        } catch (const CudaError& e) {
            why_no_cublaslt = e.what();
        }
    }
    for (const auto& name : names) {
        ProbeOutput out;
        try {
            out = run_one(context, name, cublaslt.get(), why_no_cublaslt);
        } catch (const CudaError& e) {
            // Reported with the probe's name; later probes still run where the error was not sticky.
            out = named_output(name);
            out.skipped = std::string("failed: ") + e.what();
        }
        deliver(out, sink, sink_context);
    }
}

}  // namespace
}  // namespace inferbench::probe_cuda

using namespace inferbench::probe_cuda;

INFERBENCH_PROBE_EXPORT int inferbench_probe_api_version(void) { return INFERBENCH_PROBE_API_VERSION; }

INFERBENCH_PROBE_EXPORT int inferbench_probe_device_count(int* count, char* error, size_t error_size) {
    return guarded(error, error_size, [&] { check(cudaGetDeviceCount(count), "cudaGetDeviceCount"); });
}

INFERBENCH_PROBE_EXPORT int inferbench_probe_device_info(int index, InferbenchProbeDevice* out, char* error,
                                                         size_t error_size) {
    return guarded(error, error_size, [&] {
        cudaDeviceProp p{};
        check(cudaGetDeviceProperties(&p, index), "cudaGetDeviceProperties");
        *out = InferbenchProbeDevice{};
        out->index = index;
        std::snprintf(out->name, sizeof(out->name), "%s", p.name);
        format_uuid(p.uuid, out->uuid, sizeof(out->uuid));
        check(cudaDeviceGetPCIBusId(out->pci_bus_id, sizeof(out->pci_bus_id), index), "cudaDeviceGetPCIBusId");
        out->compute_major = p.major;
        out->compute_minor = p.minor;
        out->multiprocessors = p.multiProcessorCount;
        out->memory_bytes = static_cast<long long>(p.totalGlobalMem);
        out->l2_bytes = p.l2CacheSize;
        int clock_khz = 0;
        if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index) == cudaSuccess)
            out->max_sm_clock_khz = clock_khz;
    });
}

INFERBENCH_PROBE_EXPORT int inferbench_probe_run(const InferbenchProbeRequest* request, InferbenchProbeSink sink,
                                                 void* context, char* error, size_t error_size) {
    return guarded(error, error_size, [&] { run(*request, sink, context); });
}
