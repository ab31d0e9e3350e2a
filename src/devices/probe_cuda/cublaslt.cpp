#include "devices/probe_cuda/cublaslt.hpp"

#include <dlfcn.h>

#include <vector>

#include "core/dl_open.hpp"
#include "devices/probe_cuda/cuda_check.hpp"

namespace inferbench::probe_cuda {
namespace {

template <typename Fn>
void bind(void* handle, Fn& fn, const char* name, const std::string& path) {
    void* symbol = dlsym(handle, name);
    if (!symbol) throw CudaError(path + " has no " + name + "; it is not a cuBLASLt library");
    fn = reinterpret_cast<Fn>(symbol);
}

}  // namespace

std::unique_ptr<CublasLtLibrary> CublasLtLibrary::open(const std::string& preferred) {
    std::vector<std::string> candidates;
    if (!preferred.empty()) candidates.push_back(preferred);
    candidates.emplace_back("libcublasLt.so.13");
    candidates.emplace_back("libcublasLt.so.12");
    std::unique_ptr<CublasLtLibrary> library(new CublasLtLibrary());
    OpenedLibrary opened = dlopen_first(candidates);
    library->handle_ = opened.handle;
    library->path_ = opened.path;
    if (!library->handle_)
        throw CudaError("cannot open cuBLASLt (" + opened.tried +
                        "); install the CUDA toolkit's cuBLAS or set INFERBENCH_CUBLASLT_LIBRARY to a libcublasLt.so");
    CublasLtApi& api = library->api_;
    const std::string& path = library->path_;
    void* handle = library->handle_;
    bind(handle, api.GetVersion, "cublasLtGetVersion", path);
    bind(handle, api.Create, "cublasLtCreate", path);
    bind(handle, api.Destroy, "cublasLtDestroy", path);
    bind(handle, api.MatmulDescCreate, "cublasLtMatmulDescCreate", path);
    bind(handle, api.MatmulDescDestroy, "cublasLtMatmulDescDestroy", path);
    bind(handle, api.MatmulDescSetAttribute, "cublasLtMatmulDescSetAttribute", path);
    bind(handle, api.MatrixLayoutCreate, "cublasLtMatrixLayoutCreate", path);
    bind(handle, api.MatrixLayoutDestroy, "cublasLtMatrixLayoutDestroy", path);
    bind(handle, api.MatmulPreferenceCreate, "cublasLtMatmulPreferenceCreate", path);
    bind(handle, api.MatmulPreferenceDestroy, "cublasLtMatmulPreferenceDestroy", path);
    bind(handle, api.MatmulPreferenceSetAttribute, "cublasLtMatmulPreferenceSetAttribute", path);
    bind(handle, api.MatmulAlgoGetHeuristic, "cublasLtMatmulAlgoGetHeuristic", path);
    bind(handle, api.Matmul, "cublasLtMatmul", path);
    return library;
}

CublasLtLibrary::~CublasLtLibrary() {
    if (handle_) dlclose(handle_);
}

void check_cublas(cublasStatus_t status, const char* what) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw CudaError(std::string(what) + ": cuBLAS status " + std::to_string(static_cast<int>(status)));
}

}  // namespace inferbench::probe_cuda
