// The probe kernels, launched from host code: FMA chains on the CUDA cores, DRAM copy / triad, an L2
// read loop, and fills of GEMM operands with seeded values in [-1, 1).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace inferbench::probe_cuda {

// Independent accumulators per thread: enough instruction-level parallelism to hide the FMA latency.
inline constexpr int kFmaChains = 8;
inline constexpr int kFmaThreads = 256;

enum class FmaKind { fp64, fp32, fp16x2, int32 };
// Operations one FMA instruction of a thread performs: 2 (multiply and add), 4 for half2 (two lanes).
inline constexpr double ops_per_instruction(FmaKind kind) { return kind == FmaKind::fp16x2 ? 4.0 : 2.0; }

// `blocks` x kFmaThreads threads, each issuing iterations x kFmaChains dependent-chain FMAs; one value per
// thread is written to `out` (blocks x kFmaThreads x 8 bytes) so that nothing is optimised away.
void launch_fma(FmaKind kind, int blocks, int iterations, void* out, cudaStream_t stream);

// out = in over `bytes` (a multiple of 16).
void launch_copy(const void* in, void* out, std::size_t bytes, int blocks, cudaStream_t stream);
// a = b + 3 * c over `bytes` per array (float, a multiple of 16).
void launch_triad(void* a, const void* b, const void* c, std::size_t bytes, int blocks, cudaStream_t stream);
// Reads `bytes` (a multiple of 16) `passes` times through the L2 (bypassing L1); one sum per thread to `out`
// (blocks x 256 floats).
void launch_l2_read(const void* in, std::size_t bytes, int passes, float* out, int blocks, cudaStream_t stream);

enum class FillKind { f32, f16, bf16, fp8_e4m3, i8 };
// `count` elements of seeded pseudo-random values in [-1, 1) (integers: [-64, 63]).
void launch_fill(FillKind kind, void* data, std::size_t count, unsigned seed, cudaStream_t stream);
void launch_fill_constant_f32(float* data, std::size_t count, float value, cudaStream_t stream);

}  // namespace inferbench::probe_cuda
