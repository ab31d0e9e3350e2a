#include "devices/probe.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <cstdlib>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "devices/probe_api.h"

namespace inferbench::devices {
namespace {

constexpr std::string_view kModuleFile = "libinferbench_probe_cuda.so";

std::filesystem::path executable_dir() {
    std::array<char, 4096> buffer{};
    const ssize_t length = readlink("/proc/self/exe", buffer.data(), buffer.size() - 1);
    if (length <= 0) return std::filesystem::current_path();
    return std::filesystem::path(std::string(buffer.data(), static_cast<std::size_t>(length))).parent_path();
}

template <typename Fn>
Fn symbol(void* handle, const char* name, const std::filesystem::path& path) {
    void* address = dlsym(handle, name);
    if (!address)
        throw EnvironmentError(fmt::format("{} has no {}; rebuild the CUDA probe module", path.string(), name));
    return reinterpret_cast<Fn>(address);
}

}  // namespace

std::string ProbeMeasurement::details_json() const {
    nlohmann::ordered_json j;
    j["dense"] = dense;
    if (!precision.empty()) j["precision"] = precision;
    j[unit == "GB/s" ? "bytes_per_run" : "operations_per_run"] = work;
    j["best_seconds_per_run"] = seconds;
    if (m > 0) j["shape_mnk"] = {m, n, k};
    if (!detail.empty()) j["detail"] = detail;
    return j.dump();
}

struct CudaProbeModule::Api {
    decltype(&inferbench_probe_device_count) device_count = nullptr;
    decltype(&inferbench_probe_device_info) device_info = nullptr;
    decltype(&inferbench_probe_run) run = nullptr;
};

const std::vector<std::string>& gpu_probe_names() {
    static const std::vector<std::string> names = {"fma_fp64",   "fma_fp32",    "fma_fp16x2", "imad_int32", "dram_copy",
                                                   "dram_triad", "dram_memcpy", "l2_read",    "gemm_tf32",  "gemm_fp16",
                                                   "gemm_bf16",  "gemm_fp8",    "gemm_int8"};
    return names;
}

std::vector<std::filesystem::path> CudaProbeModule::default_candidates() {
    if (const char* env = std::getenv("INFERBENCH_PROBE_MODULE"); env && *env) return {env};
    const auto dir = executable_dir();
    return {dir / kModuleFile, dir / ".." / "lib" / "inferbench" / kModuleFile};
}

std::unique_ptr<CudaProbeModule> CudaProbeModule::open(const std::vector<std::filesystem::path>& candidates) {
    std::vector<std::string> tried;
    for (const auto& candidate : candidates) {
        std::error_code ec;
        if (!std::filesystem::exists(candidate, ec)) {
            tried.push_back(candidate.string() + ": not there");
            continue;
        }
        void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = dlerror();
            tried.push_back(why ? why : candidate.string());
            continue;
        }
        std::unique_ptr<CudaProbeModule> module(new CudaProbeModule());
        module->handle_ = handle;
        module->path_ = candidate;
        const auto version =
            symbol<decltype(&inferbench_probe_api_version)>(handle, "inferbench_probe_api_version", candidate)();
        if (version != INFERBENCH_PROBE_API_VERSION)
            throw EnvironmentError(
                fmt::format("{} speaks probe API {}, this inferbench {}; use the module built with it",
                            candidate.string(), version, INFERBENCH_PROBE_API_VERSION));
        module->api_ = std::make_unique<Api>();
        module->api_->device_count =
            symbol<decltype(&inferbench_probe_device_count)>(handle, "inferbench_probe_device_count", candidate);
        module->api_->device_info =
            symbol<decltype(&inferbench_probe_device_info)>(handle, "inferbench_probe_device_info", candidate);
        module->api_->run = symbol<decltype(&inferbench_probe_run)>(handle, "inferbench_probe_run", candidate);
        return module;
    }
    std::string list;
    for (const auto& t : tried) list += (list.empty() ? "" : "; ") + t;
    throw EnvironmentError(
        fmt::format("no CUDA probe module ({}); build inferbench where nvcc is found (it builds {}), "
                    "or set INFERBENCH_PROBE_MODULE",
                    list, kModuleFile));
}

CudaProbeModule::~CudaProbeModule() {
    if (handle_) dlclose(handle_);
}

int CudaProbeModule::device_count() const {
    int count = 0;
    std::array<char, 512> error{};
    if (api_->device_count(&count, error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("no CUDA device usable: {}", error.data()));
    return count;
}

GpuIdentityInfo CudaProbeModule::device(int index) const {
    InferbenchProbeDevice d{};
    std::array<char, 512> error{};
    if (api_->device_info(index, &d, error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("CUDA device {}: {}", index, error.data()));
    GpuIdentityInfo info;
    info.index = d.index;
    info.name = d.name;
    info.uuid = d.uuid;
    info.pci_bus_id = d.pci_bus_id;
    info.compute_major = d.compute_major;
    info.compute_minor = d.compute_minor;
    info.multiprocessors = d.multiprocessors;
    info.memory_bytes = d.memory_bytes;
    info.l2_bytes = d.l2_bytes;
    info.max_sm_clock_khz = d.max_sm_clock_khz;
    return info;
}

std::vector<ProbeMeasurement> CudaProbeModule::run(const GpuProbeRequest& request) const {
    InferbenchProbeRequest r{};
    r.device = request.device;
    r.probes = request.probes.c_str();
    r.cublaslt_library = request.cublaslt_library.empty() ? nullptr : request.cublaslt_library.c_str();
    r.dram_bytes = request.dram_bytes;
    r.l2_bytes = request.l2_bytes;
    r.gemm_size = request.gemm_size;
    r.repetitions = request.repetitions;
    std::vector<ProbeMeasurement> results;
    const InferbenchProbeSink sink = [](void* context, const InferbenchProbeMeasurement* m) {
        ProbeMeasurement out;
        out.name = m->name;
        out.value = m->value;
        out.unit = m->unit;
        out.precision = m->precision;
        out.dense = m->dense != 0;
        out.work = m->work;
        out.seconds = m->seconds;
        out.m = m->m;
        out.n = m->n;
        out.k = m->k;
        out.detail = m->detail ? m->detail : "";
        out.skipped = m->skipped ? m->skipped : "";
        static_cast<std::vector<ProbeMeasurement>*>(context)->push_back(std::move(out));
    };
    std::array<char, 1024> error{};
    if (api_->run(&r, sink, &results, error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("CUDA probe on device {}: {}", request.device, error.data()));
    return results;
}

}  // namespace inferbench::devices
