// Probe arithmetic (shared with the CUDA module), the CPU probe on tiny sizes, and the CUDA module's
// loading where there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "devices/cpu_peaks.hpp"
#include "devices/probe.hpp"
#include "devices/probe_math.hpp"

namespace inferbench::devices {
namespace {

namespace math = probe_math;

TEST(ProbeMath, GemmOperationsAndRates) {
    EXPECT_DOUBLE_EQ(math::gemm_ops(8192, 8192, 8192), 2.0 * 8192 * 8192 * 8192);
    // 1.1 TFLOP in 1.39 ms: the bf16 GEMM torch.matmul runs at ~790 TFLOP/s on an H200.
    EXPECT_NEAR(math::tera_rate(math::gemm_ops(8192, 8192, 8192), 1.39e-3), 791.0, 0.1);
    EXPECT_DOUBLE_EQ(math::tera_rate(1e12, 0), 0);
    EXPECT_DOUBLE_EQ(math::fma_ops(1000, 50), 100'000);
}

TEST(ProbeMath, BandwidthCountsBytesReadAndWritten) {
    const double gib = 1024.0 * 1024 * 1024;
    EXPECT_DOUBLE_EQ(math::copy_bytes(gib), 2 * gib);
    EXPECT_DOUBLE_EQ(math::triad_bytes(gib), 3 * gib);
    // A 1 GiB copy in 0.5 ms moves 2 GiB: 4295 GB/s.
    EXPECT_NEAR(math::gigabytes_per_second(math::copy_bytes(gib), 0.5e-3), 4294.967, 1e-3);
    EXPECT_DOUBLE_EQ(math::gigabytes_per_second(1e9, 0), 0);
}

TEST(ProbeMath, BestTimeIgnoresUnmeasuredRuns) {
    const double times[] = {0.0021, 0.0, 0.0019, 0.0020};
    EXPECT_DOUBLE_EQ(math::best_seconds(times, 4), 0.0019);
    EXPECT_DOUBLE_EQ(math::best_seconds(times, 0), 0);
}

TEST(ProbeMeasurement, DetailsKeepWorkTimeAndShape) {
    ProbeMeasurement m;
    m.name = "gemm_bf16";
    m.value = 791;
    m.unit = "TFLOP/s";
    m.precision = "bf16";
    m.work = 1.1e12;
    m.seconds = 1.39e-3;
    m.m = m.n = m.k = 8192;
    m.detail = "cuBLASLt";
    const auto j = nlohmann::json::parse(m.details_json());
    EXPECT_EQ(j["dense"], true);
    EXPECT_EQ(j["precision"], "bf16");
    EXPECT_DOUBLE_EQ(j["operations_per_run"].get<double>(), 1.1e12);
    EXPECT_DOUBLE_EQ(j["best_seconds_per_run"].get<double>(), 1.39e-3);
    EXPECT_EQ(j["shape_mnk"], nlohmann::json({8192, 8192, 8192}));
    m.unit = "GB/s";
    EXPECT_TRUE(nlohmann::json::parse(m.details_json()).contains("bytes_per_run"));
}

TEST(CpuProbe, TinyRunsGiveSaneFigures) {
    CpuProbeOptions options;
    options.array_bytes = 2 << 20;
    options.repetitions = 2;
    options.target_seconds = 0.02;
    const auto results = probe_cpu(options);
    ASSERT_EQ(results.size(), 4u);
    const auto& fp32 = results[0];
    const auto& fp64 = results[1];
    EXPECT_EQ(fp32.name, "fma_fp32");
    EXPECT_EQ(fp64.name, "fma_fp64");
    EXPECT_EQ(results[2].name, "dram_copy");
    EXPECT_EQ(results[3].name, "dram_triad");
    for (const auto& m : results) {
        EXPECT_GT(m.value, 0) << m.name;
        EXPECT_GT(m.seconds, 0) << m.name;
        EXPECT_TRUE(m.skipped.empty());
    }
    // Below the estimated peak (with room for turbo and shared hosts), and fp32 about twice fp64.
    const auto cpu = host_cpuinfo();
    const auto estimate = estimate_cpu_peaks(cpu, host_max_freq_khz());
    ASSERT_TRUE(estimate);
    EXPECT_LT(fp32.value * 1e3, estimate->fp32_gflops * 1.5);
    // Another test on the same cores slows one short run and not the next, so the ratio is taken from the
    // best rate of each precision over a few tries (contention only ever lowers a rate).
    double best_fp32 = fp32.value;
    double best_fp64 = fp64.value;
    CpuProbeOptions fma_only = options;
    fma_only.memory = false;
    for (int attempt = 0; attempt < 8 && best_fp32 / best_fp64 <= 1.3; ++attempt) {
        const auto again = probe_cpu(fma_only);
        ASSERT_EQ(again.size(), 2u);
        best_fp32 = std::max(best_fp32, again[0].value);
        best_fp64 = std::max(best_fp64, again[1].value);
    }
    EXPECT_GT(best_fp32 / best_fp64, 1.3);
    EXPECT_GT(results[2].value, 0.1);  // GB/s
    EXPECT_LT(results[2].value, 5000.0);
    EXPECT_EQ(fp32.unit, "TFLOP/s");
    EXPECT_EQ(results[3].unit, "GB/s");
    EXPECT_NE(fp32.detail.find(cpu_probe_isa()), std::string::npos);
}

TEST(CpuProbe, OptionsSelectWhatRuns) {
    CpuProbeOptions options;
    options.array_bytes = 1 << 20;
    options.repetitions = 1;
    options.fma = false;
    const auto results = probe_cpu(options);
    ASSERT_EQ(results.size(), 2u);
    EXPECT_EQ(results[0].name, "dram_copy");
    EXPECT_GE(default_cpu_array_bytes(), std::int64_t{256} << 20);
}

TEST(CudaProbeModule, MissingOrForeignFilesAreEnvironmentErrors) {
    testing::ScratchDir scratch;
    scratch.write("not-a-module.so", "text");
    try {
        CudaProbeModule::open({scratch.path() / "none.so", scratch.path() / "not-a-module.so"});
        FAIL();
    } catch (const EnvironmentError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("none.so: not there"), std::string::npos) << what;
        EXPECT_NE(what.find("not-a-module.so"), std::string::npos) << what;
        EXPECT_NE(what.find("set INFERBENCH_PROBE_MODULE"), std::string::npos) << what;
    }
}

#ifdef INFERBENCH_PROBE_MODULE_PATH
// The real module: it loads, speaks our API version, and says why there is no device on this machine.
TEST(CudaProbeModule, TheBuiltModuleLoadsAndReportsNoDeviceHere) {
    const auto module = CudaProbeModule::open({INFERBENCH_PROBE_MODULE_PATH});
    EXPECT_EQ(module->path(), INFERBENCH_PROBE_MODULE_PATH);
    try {
        const int count = module->device_count();
        GTEST_SKIP() << count << " CUDA device(s) here: the no-device path is not reachable";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("no CUDA device usable: cudaGetDeviceCount"), std::string::npos)
            << e.what();
    }
}
#endif

}  // namespace
}  // namespace inferbench::devices
