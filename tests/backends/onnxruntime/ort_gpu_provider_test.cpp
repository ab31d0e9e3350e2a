// Whether a GPU execution provider can run here: the libraries it needs, checked in order with the first
// missing one named, and the answer on this machine (a skip reason without a GPU, never a crash).
#include "backends/onnxruntime/ort_gpu_provider.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::vector<std::string> sonames(GpuProvider provider) {
    std::vector<std::string> out;
    for (const auto& library : required_libraries(provider)) out.emplace_back(library.soname);
    return out;
}

TEST(GpuProvider, TheLibrariesOfTheCuda13Providers) {
    EXPECT_THAT(sonames(GpuProvider::cuda),
                ::testing::ElementsAre("libcuda.so.1", "libcudart.so.13", "libcublasLt.so.13", "libcudnn.so.9"));
    EXPECT_THAT(sonames(GpuProvider::tensorrt), ::testing::Contains("libnvinfer.so.10"));
    EXPECT_EQ(provider_name(GpuProvider::cuda), "CUDAExecutionProvider");
    EXPECT_EQ(provider_library(GpuProvider::tensorrt), "libonnxruntime_providers_tensorrt.so");
}

TEST(GpuProvider, NamesTheFirstMissingLibrary) {
    const std::set<std::string> present = {"libcuda.so.1", "libcudart.so.13"};
    std::vector<std::string> tried;
    const LibraryOpener fake = [&](std::string_view soname) -> std::optional<std::string> {
        tried.emplace_back(soname);
        if (present.count(std::string(soname)) != 0) return std::nullopt;
        return std::string(soname) + ": cannot open shared object file: No such file or directory";
    };
    const auto problem = missing_library_problem(required_libraries(GpuProvider::cuda), fake);
    ASSERT_TRUE(problem.has_value());
    EXPECT_THAT(*problem, AllOf(HasSubstr("libcublasLt.so.13 (cuBLASLt of CUDA 13) cannot be loaded: "
                                          "libcublasLt.so.13: cannot open shared object file"),
                                HasSubstr("LD_LIBRARY_PATH")));
    EXPECT_THAT(tried, ::testing::ElementsAre("libcuda.so.1", "libcudart.so.13", "libcublasLt.so.13"));  // then stops
}

TEST(GpuProvider, NoProblemWhenEveryLibraryOpens) {
    const LibraryOpener all = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
    EXPECT_EQ(missing_library_problem(required_libraries(GpuProvider::tensorrt), all), std::nullopt);
}

TEST(GpuProvider, WithoutAGpuEachProviderAnswersAReason) {
    const OrtRuntime& runtime = OrtRuntime::open("");
    for (const GpuProvider provider : {GpuProvider::cuda, GpuProvider::tensorrt}) {
        const auto problem = GpuProviderSetup::problem(runtime, provider, 0);
        if (!problem) GTEST_SKIP() << provider_name(provider) << " runs on GPU 0 here";
        EXPECT_FALSE(problem->empty());
        EXPECT_EQ(GpuProviderSetup::problem(runtime, provider, 0), problem) << "found once, the same answer";
    }
    const auto far = GpuProviderSetup::problem(runtime, GpuProvider::cuda, 1000);
    ASSERT_TRUE(far.has_value()) << "no machine has GPU 1000";
}

}  // namespace
}  // namespace inferbench
