// The probes of one CUDA device. Each returns its result, or one with `skipped` set when it cannot run
// here (precision not supported, not enough memory, no cuBLASLt); a CUDA failure throws CudaError.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <utility>

#include "devices/probe_cuda/cublaslt.hpp"

namespace inferbench::probe_cuda {

struct ProbeOutput {
    std::string name, unit, precision, detail, skipped;
    double value = 0;    // in unit
    double work = 0;     // operations or bytes of one timed run
    double seconds = 0;  // best time of one run
    int m = 0, n = 0, k = 0;
};

inline ProbeOutput named_output(std::string name, std::string unit = {}, std::string precision = {}) {
    ProbeOutput out;
    out.name = std::move(name);
    out.unit = std::move(unit);
    out.precision = std::move(precision);
    return out;
}

struct ProbeContext {
    int device = 0;
    cudaDeviceProp properties{};
    cudaStream_t stream = nullptr;
    int repetitions = 5;
    std::size_t dram_bytes = 0;  // per buffer
    std::size_t l2_bytes = 0;
    int gemm_size = 8192;
    double target_seconds = 0.05;  // how long one timed run should take, where the probe can choose
    int resident_blocks() const;   // blocks of 256 threads that fill every SM once
};

ProbeOutput probe_fma(const ProbeContext& context,
                      const std::string& name);  // fma_fp64, fma_fp32, fma_fp16x2, imad_int32
ProbeOutput probe_dram(const ProbeContext& context, const std::string& name);  // dram_copy, dram_triad, dram_memcpy
ProbeOutput probe_l2(const ProbeContext& context);                             // l2_read
// gemm_tf32, gemm_fp16, gemm_bf16, gemm_fp8, gemm_int8. `cublaslt` null: skipped with `why_no_cublaslt`.
ProbeOutput probe_gemm(const ProbeContext& context, const std::string& name, const CublasLtLibrary* cublaslt,
                       const std::string& why_no_cublaslt);

bool is_gemm_probe(const std::string& name);

}  // namespace inferbench::probe_cuda
