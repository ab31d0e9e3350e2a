#include "devices/probe_cuda/kernels.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <type_traits>

#include <cstdint>

namespace inferbench::probe_cuda {
namespace {

constexpr int kStreamThreads = 256;

// The FMA chains. The multiplier and addend come in as arguments so the compiler cannot fold the chain;
// with a < 1 every accumulator converges to b / (1 - a) and stays finite (no denormals, no overflow).
// fp32 (fmaf) or fp64 (fma): one fused multiply-add per chain step.
__device__ __forceinline__ float fused(float x, float a, float b) { return fmaf(x, a, b); }
__device__ __forceinline__ double fused(double x, double a, double b) { return fma(x, a, b); }

template <typename T>
__global__ void fma_chains(T* out, int iterations, T a, T b) {
    T acc[kFmaChains];
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) acc[c] = static_cast<T>(threadIdx.x + c) * static_cast<T>(1e-3);
#pragma unroll 16
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int c = 0; c < kFmaChains; ++c) acc[c] = fused(acc[c], a, b);
    }
    T sum = 0;
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) sum += acc[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

__global__ void fma_fp16x2(__half2* out, int iterations, float a, float b) {
    const __half2 a2 = __float2half2_rn(a);
    const __half2 b2 = __float2half2_rn(b);
    __half2 acc[kFmaChains];
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) acc[c] = __float2half2_rn(static_cast<float>(c) * 1e-2f);
#pragma unroll 16
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int c = 0; c < kFmaChains; ++c) acc[c] = __hfma2(acc[c], a2, b2);
    }
    __half2 sum = acc[0];
#pragma unroll
    for (int c = 1; c < kFmaChains; ++c) sum = __hadd2(sum, acc[c]);
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// Unsigned, so the wrap-around of the chain is defined behaviour.
__global__ void imad_int32(unsigned* out, int iterations, unsigned a, unsigned b) {
    unsigned acc[kFmaChains];
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) acc[c] = threadIdx.x + static_cast<unsigned>(c);
#pragma unroll 16
    for (int i = 0; i < iterations; ++i) {
#pragma unroll
        for (int c = 0; c < kFmaChains; ++c) acc[c] = acc[c] * a + b;
    }
    unsigned sum = 0;
#pragma unroll
    for (int c = 0; c < kFmaChains; ++c) sum ^= acc[c];
    out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// Four independent 16-byte loads in flight per thread before the stores.
__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n; i += 4 * stride) {
        const float4 v0 = in[i], v1 = in[i + stride], v2 = in[i + 2 * stride], v3 = in[i + 3 * stride];
        out[i] = v0;
        out[i + stride] = v1;
        out[i + 2 * stride] = v2;
        out[i + 3 * stride] = v3;
    }
    for (; i < n; i += stride) out[i] = in[i];
}

__device__ __forceinline__ float4 triad4(float4 b, float4 c) {
    return make_float4(b.x + 3.0f * c.x, b.y + 3.0f * c.y, b.z + 3.0f * c.z, b.w + 3.0f * c.w);
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             std::size_t n) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + stride < n; i += 2 * stride) {
        const float4 b0 = b[i], c0 = c[i], b1 = b[i + stride], c1 = c[i + stride];
        a[i] = triad4(b0, c0);
        a[i + stride] = triad4(b1, c1);
    }
    for (; i < n; i += stride) a[i] = triad4(b[i], c[i]);
}

// __ldcg: cached in L2 only, so every load is an L2 hit once the buffer is resident.
__global__ void l2_read_kernel(const float4* __restrict__ in, std::size_t n, int passes, float* out) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    float4 s0 = make_float4(0, 0, 0, 0), s1 = s0;
    for (int p = 0; p < passes; ++p) {
        std::size_t i = first;
        for (; i + stride < n; i += 2 * stride) {
            const float4 v0 = __ldcg(in + i), v1 = __ldcg(in + i + stride);
            s0.x += v0.x;
            s0.y += v0.y;
            s0.z += v0.z;
            s0.w += v0.w;
            s1.x += v1.x;
            s1.y += v1.y;
            s1.z += v1.z;
            s1.w += v1.w;
        }
        for (; i < n; i += stride) {
            const float4 v = __ldcg(in + i);
            s0.x += v.x;
            s0.y += v.y;
            s0.z += v.z;
            s0.w += v.w;
        }
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = s0.x + s0.y + s0.z + s0.w + s1.x + s1.y + s1.z + s1.w;
}

// A 32-bit hash of (seed, index) -> [-1, 1), not core/splitmix64: each thread needs the value of its
// own element without stepping a sequence, the values only have to be non-constant (they fill the
// probes' operands, nobody compares them), and 32-bit multiplies are native on the GPU where every
// 64-bit one takes several instructions, which the fill of a GiB-sized operand would pay per element.
__device__ __forceinline__ float hashed_unit(unsigned seed, std::size_t index) {
    unsigned x = static_cast<unsigned>(index) * 0x9E3779B9u ^ (static_cast<unsigned>(index >> 32) + seed * 0x85EBCA6Bu);
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__device__ __forceinline__ T convert(float v);
template <>
__device__ __forceinline__ float convert<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ __half convert<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 convert<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __nv_fp8_e4m3 convert<__nv_fp8_e4m3>(float v) {
    return __nv_fp8_e4m3(v);
}
template <>
__device__ __forceinline__ std::int8_t convert<std::int8_t>(float v) {
    return static_cast<std::int8_t>(__float2int_rd(v * 64.0f));
}

// A standard normal value clamped to [-1, 1] (Box-Muller over two hashed uniforms): the data
// PyTorch's reference feeds its fp8 GEMM (randn().clamp(-1, 1)). Tensor-core GEMMs near the power
// limit run at clocks that depend on how many bits toggle, so the probe and its reference use alike data.
__device__ __forceinline__ float hashed_clamped_normal(unsigned seed, std::size_t index) {
    const float u1 = 0.5f * (hashed_unit(seed, 2 * index) + 1.0f) + 1e-7f;
    const float u2 = 0.5f * (hashed_unit(seed, 2 * index + 1) + 1.0f);
    const float normal = sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
    return fminf(1.0f, fmaxf(-1.0f, normal));
}

template <typename T>
__global__ void fill_kernel(T* data, std::size_t count, unsigned seed) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride) {
        if constexpr (std::is_same_v<T, __nv_fp8_e4m3>) {
            data[i] = convert<T>(hashed_clamped_normal(seed, i));
        } else {
            data[i] = convert<T>(hashed_unit(seed, i));
        }
    }
}

__global__ void fill_constant_kernel(float* data, std::size_t count, float value) {
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
        data[i] = value;
}

constexpr int kFillBlocks = 1024;

}  // namespace

void launch_fma(FmaKind kind, int blocks, int iterations, void* out, cudaStream_t stream) {
    switch (kind) {
        case FmaKind::fp32:
            fma_chains<float><<<blocks, kFmaThreads, 0, stream>>>(static_cast<float*>(out), iterations, 0.9999f, 1e-4f);
            break;
        case FmaKind::fp64:
            fma_chains<double><<<blocks, kFmaThreads, 0, stream>>>(static_cast<double*>(out), iterations, 0.9999, 1e-4);
            break;
        case FmaKind::fp16x2:
            fma_fp16x2<<<blocks, kFmaThreads, 0, stream>>>(static_cast<__half2*>(out), iterations, 0.99f, 1e-2f);
            break;
        case FmaKind::int32:
            imad_int32<<<blocks, kFmaThreads, 0, stream>>>(static_cast<unsigned*>(out), iterations, 1664525u,
                                                           1013904223u);
            break;
    }
}

void launch_copy(const void* in, void* out, std::size_t bytes, int blocks, cudaStream_t stream) {
    copy_kernel<<<blocks, kStreamThreads, 0, stream>>>(static_cast<const float4*>(in), static_cast<float4*>(out),
                                                       bytes / sizeof(float4));
}

void launch_triad(void* a, const void* b, const void* c, std::size_t bytes, int blocks, cudaStream_t stream) {
    triad_kernel<<<blocks, kStreamThreads, 0, stream>>>(static_cast<float4*>(a), static_cast<const float4*>(b),
                                                        static_cast<const float4*>(c), bytes / sizeof(float4));
}

void launch_l2_read(const void* in, std::size_t bytes, int passes, float* out, int blocks, cudaStream_t stream) {
    l2_read_kernel<<<blocks, kStreamThreads, 0, stream>>>(static_cast<const float4*>(in), bytes / sizeof(float4),
                                                          passes, out);
}

void launch_fill(FillKind kind, void* data, std::size_t count, unsigned seed, cudaStream_t stream) {
    switch (kind) {
        case FillKind::f32:
            fill_kernel<<<kFillBlocks, kStreamThreads, 0, stream>>>(static_cast<float*>(data), count, seed);
            break;
        case FillKind::f16:
            fill_kernel<<<kFillBlocks, kStreamThreads, 0, stream>>>(static_cast<__half*>(data), count, seed);
            break;
        case FillKind::bf16:
            fill_kernel<<<kFillBlocks, kStreamThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count, seed);
            break;
        case FillKind::fp8_e4m3:
            fill_kernel<<<kFillBlocks, kStreamThreads, 0, stream>>>(static_cast<__nv_fp8_e4m3*>(data), count, seed);
            break;
        case FillKind::i8:
            fill_kernel<<<kFillBlocks, kStreamThreads, 0, stream>>>(static_cast<std::int8_t*>(data), count, seed);
            break;
    }
}

void launch_fill_constant_f32(float* data, std::size_t count, float value, cudaStream_t stream) {
    fill_constant_kernel<<<kFillBlocks, kStreamThreads, 0, stream>>>(data, count, value);
}

}  // namespace inferbench::probe_cuda
