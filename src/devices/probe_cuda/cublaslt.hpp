// cuBLASLt opened at run time (never linked): the module runs where only the driver is installed, and
// uses whichever cuBLASLt the machine has (a CUDA toolkit's, or the one in PyTorch's nvidia wheels).
// The types come from the CUDA 13 headers; the functions used keep their ABI across cuBLASLt 12 and 13.
#pragma once

#include <cublasLt.h>

#include <memory>
#include <string>

namespace inferbench::probe_cuda {

struct CublasLtApi {
    decltype(&cublasLtGetVersion) GetVersion = nullptr;
    decltype(&cublasLtCreate) Create = nullptr;
    decltype(&cublasLtDestroy) Destroy = nullptr;
    decltype(&cublasLtMatmulDescCreate) MatmulDescCreate = nullptr;
    decltype(&cublasLtMatmulDescDestroy) MatmulDescDestroy = nullptr;
    decltype(&cublasLtMatmulDescSetAttribute) MatmulDescSetAttribute = nullptr;
    decltype(&cublasLtMatrixLayoutCreate) MatrixLayoutCreate = nullptr;
    decltype(&cublasLtMatrixLayoutDestroy) MatrixLayoutDestroy = nullptr;
    decltype(&cublasLtMatmulPreferenceCreate) MatmulPreferenceCreate = nullptr;
    decltype(&cublasLtMatmulPreferenceDestroy) MatmulPreferenceDestroy = nullptr;
    decltype(&cublasLtMatmulPreferenceSetAttribute) MatmulPreferenceSetAttribute = nullptr;
    decltype(&cublasLtMatmulAlgoGetHeuristic) MatmulAlgoGetHeuristic = nullptr;
    decltype(&cublasLtMatmul) Matmul = nullptr;
};

class CublasLtLibrary {
public:
    // Tries `preferred` first (a path or soname; empty: none), then libcublasLt.so.13 and .so.12 through
    // the dynamic loader. Throws CudaError listing every attempt when none opens.
    static std::unique_ptr<CublasLtLibrary> open(const std::string& preferred);
    CublasLtLibrary(const CublasLtLibrary&) = delete;
    CublasLtLibrary& operator=(const CublasLtLibrary&) = delete;
    ~CublasLtLibrary();

    const CublasLtApi& api() const { return api_; }
    const std::string& path() const { return path_; }  // what was opened
    std::size_t version() const { return api_.GetVersion(); }

private:
    CublasLtLibrary() = default;
    void* handle_ = nullptr;
    std::string path_;
    CublasLtApi api_;
};

// Throws CudaError naming the call when a cuBLASLt status is not success.
void check_cublas(cublasStatus_t status, const char* what);

}  // namespace inferbench::probe_cuda
