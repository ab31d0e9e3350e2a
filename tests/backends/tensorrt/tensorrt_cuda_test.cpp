// The TensorRT backend's CUDA pieces against the real CUDA runtime: without a GPU, the probe says why;
// with one, pinned and device buffers, a stream and the shared timing events (backends/cuda_timing over the
// linked runtime's table) measure a copy round trip.
#include "backends/tensorrt/tensorrt_cuda.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "backends/cuda_linked_runtime.hpp"
#include "backends/cuda_timing.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr std::size_t kBytes = std::size_t{32} << 20;

TEST(TensorRtCuda, CheckCudaNamesTheCallAndTheError) {
    EXPECT_NO_THROW(check_cuda(cudaSuccess, "cudaMalloc"));
    EXPECT_THAT([] { check_cuda(cudaErrorInvalidValue, "cudaMemcpyAsync to the device"); },
                ::testing::ThrowsMessage<std::runtime_error>(
                    AllOf(HasSubstr("cudaMemcpyAsync to the device failed"), HasSubstr("cudaErrorInvalidValue"))));
}

TEST(TensorRtCuda, ProbeDescribesTheGpuOrSaysWhyThereIsNone) {
    const GpuProbe probe = probe_gpu(0);
    if (!probe.gpu) {
        EXPECT_THAT(probe.problem, StartsWith("the CUDA runtime finds no usable GPU ("));
        GTEST_SKIP() << "no GPU here: " << probe.problem;
    }
    EXPECT_TRUE(probe.problem.empty());
    EXPECT_FALSE(probe.gpu->name.empty());
    EXPECT_GE(probe.gpu->compute_capability.major, 5);
    EXPECT_GT(probe.gpu->memory_bytes, 0u);
    EXPECT_THAT(probe_gpu(999).problem, HasSubstr("there is no cuda:999 (this machine has"));
}

TEST(TensorRtCuda, EventsTimeACopyRoundTrip) {
    if (!probe_gpu(0).gpu) GTEST_SKIP() << "no GPU here";
    check_cuda(cudaSetDevice(0), "cudaSetDevice");
    const CudaBuffer host_in(CudaBuffer::Kind::pinned_host, kBytes);
    const CudaBuffer host_out(CudaBuffer::Kind::pinned_host, kBytes);
    const CudaBuffer device(CudaBuffer::Kind::device, kBytes);
    std::memset(host_in.data(), 0x5a, kBytes);
    const CudaStream stream = make_stream();
    IterationTimer timer(cuda::linked_runtime(), stream.get(), true);
    const DeviceTimes times = timer.time(
        [&] {
            check_cuda(cudaMemcpyAsync(device.data(), host_in.data(), kBytes, cudaMemcpyHostToDevice, stream.get()),
                       "h2d");
        },
        [&] { check_cuda(cudaMemsetAsync(device.data(), 0x5b, kBytes / 2, stream.get()), "compute stand-in"); },
        [&] {
            check_cuda(cudaMemcpyAsync(host_out.data(), device.data(), kBytes, cudaMemcpyDeviceToHost, stream.get()),
                       "d2h");
        });
    // 32 MiB over PCIe or NVLink-C2C takes between about 0.3 ms and 50 ms each way.
    EXPECT_GT(times.h2d_ns, 100'000);
    EXPECT_LT(times.h2d_ns, 50'000'000);
    EXPECT_GT(times.d2h_ns, 100'000);
    EXPECT_GT(times.compute_ns, 0);
    const auto* out = static_cast<const unsigned char*>(host_out.data());
    EXPECT_EQ(out[0], 0x5b);
    EXPECT_EQ(out[kBytes - 1], 0x5a);
    std::printf("32 MiB: h2d %.3f ms, memset %.3f ms, d2h %.3f ms\n", static_cast<double>(times.h2d_ns) * 1e-6,
                static_cast<double>(times.compute_ns) * 1e-6, static_cast<double>(times.d2h_ns) * 1e-6);
}

}  // namespace
}  // namespace inferbench
