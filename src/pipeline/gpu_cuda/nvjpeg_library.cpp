#include "pipeline/gpu_cuda/nvjpeg_library.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <vector>

#include "core/dl_open.hpp"

namespace inferbench::pipeline_cuda {
namespace {

template <typename Fn>
void bind(void* handle, Fn& fn, const char* name, const std::string& path) {
    void* symbol = dlsym(handle, name);
    if (!symbol) throw std::runtime_error(path + " has no " + name + "; it is not an nvJPEG library");
    fn = reinterpret_cast<Fn>(symbol);
}

}  // namespace

const char* nvjpeg_status_name(int status) {
    static const char* const names[] = {"NVJPEG_STATUS_SUCCESS",
                                        "NVJPEG_STATUS_NOT_INITIALIZED",
                                        "NVJPEG_STATUS_INVALID_PARAMETER",
                                        "NVJPEG_STATUS_BAD_JPEG",
                                        "NVJPEG_STATUS_JPEG_NOT_SUPPORTED",
                                        "NVJPEG_STATUS_ALLOCATOR_FAILURE",
                                        "NVJPEG_STATUS_EXECUTION_FAILED",
                                        "NVJPEG_STATUS_ARCH_MISMATCH",
                                        "NVJPEG_STATUS_INTERNAL_ERROR",
                                        "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED",
                                        "NVJPEG_STATUS_INCOMPLETE_BITSTREAM"};
    if (status >= 0 && status < static_cast<int>(sizeof names / sizeof names[0])) return names[status];
    return "an unknown nvJPEG status";
}

void check_nvjpeg(int status, const char* what) {
    if (status != kNvjpegSuccess)
        throw std::runtime_error(std::string(what) + ": " + nvjpeg_status_name(status) + " (" + std::to_string(status) +
                                 ")");
}

std::unique_ptr<NvjpegLibrary> NvjpegLibrary::open(const std::string& preferred) {
    std::vector<std::string> candidates;
    if (!preferred.empty()) candidates.push_back(preferred);
    candidates.emplace_back("libnvjpeg.so.13");
    candidates.emplace_back("libnvjpeg.so.12");
    std::unique_ptr<NvjpegLibrary> library(new NvjpegLibrary());
    OpenedLibrary opened = dlopen_first(candidates);
    library->handle_ = opened.handle;
    library->path_ = opened.path;
    if (!library->handle_)
        throw std::runtime_error("cannot open nvJPEG (" + opened.tried +
                                 "); install CUDA's nvJPEG (libnvjpeg) or PyTorch's nvidia-nvjpeg wheel and put its "
                                 "folder on LD_LIBRARY_PATH, or set INFERBENCH_NVJPEG_LIBRARY to a libnvjpeg.so");
    NvjpegApi& api = library->api_;
    const std::string& path = library->path_;
    void* handle = library->handle_;
    bind(handle, api.GetProperty, "nvjpegGetProperty", path);
    bind(handle, api.CreateSimple, "nvjpegCreateSimple", path);
    bind(handle, api.Destroy, "nvjpegDestroy", path);
    bind(handle, api.JpegStateCreate, "nvjpegJpegStateCreate", path);
    bind(handle, api.JpegStateDestroy, "nvjpegJpegStateDestroy", path);
    bind(handle, api.GetImageInfo, "nvjpegGetImageInfo", path);
    bind(handle, api.Decode, "nvjpegDecode", path);
    bind(handle, api.DecodeBatchedInitialize, "nvjpegDecodeBatchedInitialize", path);
    bind(handle, api.DecodeBatched, "nvjpegDecodeBatched", path);
    bind(handle, api.CreateEx, "nvjpegCreateEx", path);
    bind(handle, api.JpegStreamCreate, "nvjpegJpegStreamCreate", path);
    bind(handle, api.JpegStreamDestroy, "nvjpegJpegStreamDestroy", path);
    bind(handle, api.JpegStreamParseHeader, "nvjpegJpegStreamParseHeader", path);
    bind(handle, api.DecodeBatchedSupported, "nvjpegDecodeBatchedSupported", path);
    return library;
}

NvjpegLibrary::~NvjpegLibrary() {
    if (handle_) dlclose(handle_);
}

std::string NvjpegLibrary::version() const {
    int major = 0;
    int minor = 0;
    int patch = 0;
    if (api_.GetProperty(kMajorVersion, &major) != kNvjpegSuccess ||
        api_.GetProperty(kMinorVersion, &minor) != kNvjpegSuccess ||
        api_.GetProperty(kPatchLevel, &patch) != kNvjpegSuccess)
        return "unknown";
    return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

}  // namespace inferbench::pipeline_cuda
