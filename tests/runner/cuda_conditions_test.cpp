// The worker's CUDA conditions against a fake driver table: the sync mode set before the backend and
// checked after it, the L2 flush's buffer and the work it does between iterations, errors named by call.
#include "runner/worker/cuda_conditions.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/metrics/harness_metrics.hpp"
#include "runner/worker/measure_loop.hpp"

namespace inferbench::runner {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace cuda_driver;

// The fake driver's state: one GPU of `l2_bytes` of L2, its primary context, and every call in order.
struct FakeDriver {
    int l2_bytes = 50 * 1024 * 1024;
    unsigned flags = 0;
    bool active = false;
    int retained = 0;
    int pushed = 0;
    std::size_t allocated = 0;
    std::vector<std::string> calls;
    std::vector<std::size_t> memset_bytes;
    std::string fail;  // the call that answers error 2 (out of memory)
};
FakeDriver g_fake;

CUresult answer(const char* call) {
    g_fake.calls.emplace_back(call);
    return g_fake.fail == call ? 2 : 0;
}

const DriverTable kFakeTable = {
    [](unsigned) { return answer("cuInit"); },
    [](CUdevice* d, int ordinal) {
        *d = ordinal;
        return answer("cuDeviceGet");
    },
    [](int* value, int attribute, CUdevice) {
        *value = attribute == kAttributeL2CacheSize ? g_fake.l2_bytes : 0;
        return answer("cuDeviceGetAttribute");
    },
    [](CUcontext* ctx, CUdevice) {
        *ctx = &g_fake;
        g_fake.active = true;
        ++g_fake.retained;
        return answer("cuDevicePrimaryCtxRetain");
    },
    [](CUdevice) {
        --g_fake.retained;
        return answer("cuDevicePrimaryCtxRelease");
    },
    [](CUdevice, unsigned flags) {
        g_fake.flags = flags;
        return answer("cuDevicePrimaryCtxSetFlags");
    },
    [](CUdevice, unsigned* flags, int* active) {
        *flags = g_fake.flags;
        *active = g_fake.active ? 1 : 0;
        return answer("cuDevicePrimaryCtxGetState");
    },
    [](CUcontext) {
        ++g_fake.pushed;
        return answer("cuCtxPushCurrent");
    },
    [](CUcontext*) {
        --g_fake.pushed;
        return answer("cuCtxPopCurrent");
    },
    []() { return answer("cuCtxSynchronize"); },
    [](CUdeviceptr* p, std::size_t bytes) {
        *p = 0x1000;
        g_fake.allocated = bytes;
        return answer("cuMemAlloc");
    },
    [](CUdeviceptr) {
        g_fake.allocated = 0;
        return answer("cuMemFree");
    },
    [](CUdeviceptr, unsigned char, std::size_t n, CUstream) {
        g_fake.memset_bytes.push_back(n);
        return answer("cuMemsetD8Async");
    },
    [](CUresult, const char** text) {
        *text = "out of memory";
        return 0;
    },
};

BenchmarkSpec cuda_cell(bool l2_flush, SyncMode sync) {
    BenchmarkSpec spec;
    spec.device = Device{DeviceKind::cuda, 1};
    spec.conditions.l2_flush = l2_flush;
    spec.conditions.sync = sync;
    return spec;
}

class CudaConditionsTest : public ::testing::Test {
protected:
    void SetUp() override { g_fake = FakeDriver{}; }
};

TEST_F(CudaConditionsTest, NothingAskedTouchesNoDriver) {
    // No table at all: a cell that asks for nothing never opens libcuda.
    CudaConditions none(cuda_cell(false, SyncMode::automatic));
    EXPECT_TRUE(none.after_prepare().empty());
    EXPECT_EQ(none.between(), nullptr);
    BenchmarkSpec cpu = cuda_cell(true, SyncMode::blocking);
    cpu.device = Device{DeviceKind::cpu, 0};
    CudaConditions on_cpu(cpu);
    EXPECT_TRUE(on_cpu.after_prepare().empty()) << "a CPU cell's conditions are off whatever it carries";
    EXPECT_EQ(on_cpu.between(), nullptr);
}

TEST_F(CudaConditionsTest, SyncIsSetBeforeTheBackendAndCheckedAfter) {
    g_fake.flags = 0x8;  // another flag the context carries: kept
    CudaConditions conditions(cuda_cell(false, SyncMode::blocking), &kFakeTable);
    EXPECT_EQ(g_fake.flags, 0x8u | 0x4u);
    EXPECT_THAT(g_fake.calls, ElementsAre("cuInit", "cuDeviceGet", "cuDevicePrimaryCtxGetState", "cuDevicePrimaryCtxSetFlags"));
    const auto metrics = conditions.after_prepare();
    ASSERT_EQ(metrics.size(), 2u);
    EXPECT_EQ(metrics[0].name, harness_metrics::kCudaSchedFlags);
    EXPECT_EQ(metrics[0].value, 4.0);
    EXPECT_EQ(metrics[1].name, harness_metrics::kCudaContextWasActive);
    EXPECT_EQ(metrics[1].value, 0.0);
    EXPECT_EQ(sched_flags(SyncMode::spin), 1u);
    EXPECT_EQ(sched_flags(SyncMode::yield), 2u);
    EXPECT_EQ(sched_flags(SyncMode::automatic), 0u);
}

TEST_F(CudaConditionsTest, AContextThatExistedIsSaidSoAndABackendThatChangedTheFlagsFails) {
    g_fake.active = true;
    CudaConditions conditions(cuda_cell(false, SyncMode::spin), &kFakeTable);
    g_fake.flags = 0x4;  // the backend made its context with blocking sync
    try {
        conditions.after_prepare();
        FAIL() << "expected the check to fail";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("sync spin did not hold: GPU 1's primary context waits with blocking"));
    }
    g_fake.flags = 0x1;
    EXPECT_EQ(conditions.after_prepare()[1].value, 1.0) << "the context was active when the flags were set";
}

TEST_F(CudaConditionsTest, AFailedCallIsNamed) {
    g_fake.fail = "cuDevicePrimaryCtxSetFlags";
    try {
        CudaConditions conditions(cuda_cell(false, SyncMode::yield), &kFakeTable);
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "sync yield: CUDA cuDevicePrimaryCtxSetFlags failed: out of memory (error 2)");
    }
}

TEST_F(CudaConditionsTest, TheFlushWritesTwiceTheL2AndWaitsForIt) {
    CudaConditions conditions(cuda_cell(true, SyncMode::automatic), &kFakeTable);
    const auto metrics = conditions.after_prepare();
    ASSERT_EQ(metrics.size(), 1u);
    EXPECT_EQ(metrics[0].name, harness_metrics::kL2FlushBytes);
    EXPECT_EQ(metrics[0].value, 2.0 * 50 * 1024 * 1024);
    EXPECT_EQ(g_fake.allocated, 2u * 50 * 1024 * 1024);
    BetweenIterations* flush = conditions.between();
    ASSERT_NE(flush, nullptr);
    g_fake.calls.clear();
    flush->run();
    flush->run();
    EXPECT_THAT(g_fake.calls, ElementsAre("cuCtxPushCurrent", "cuMemsetD8Async", "cuCtxSynchronize", "cuCtxPopCurrent",
                                          "cuCtxPushCurrent", "cuMemsetD8Async", "cuCtxSynchronize", "cuCtxPopCurrent"));
    EXPECT_THAT(g_fake.memset_bytes, ElementsAre(2u * 50 * 1024 * 1024, 2u * 50 * 1024 * 1024));
    EXPECT_EQ(g_fake.pushed, 0) << "the context is popped after each flush";
}

TEST_F(CudaConditionsTest, TheFlushBufferIsFreedAndItsContextReleased) {
    {
        CudaConditions conditions(cuda_cell(true, SyncMode::automatic), &kFakeTable);
        conditions.after_prepare();
        EXPECT_EQ(g_fake.retained, 1);
    }
    EXPECT_EQ(g_fake.allocated, 0u);
    EXPECT_EQ(g_fake.retained, 0);
}

TEST_F(CudaConditionsTest, AFlushThatCannotBeSetUpSaysWhy) {
    g_fake.fail = "cuMemAlloc";
    CudaConditions conditions(cuda_cell(true, SyncMode::automatic), &kFakeTable);
    try {
        conditions.after_prepare();
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "l2_flush: CUDA cuMemAlloc failed: out of memory (error 2)");
    }
    EXPECT_EQ(g_fake.retained, 0) << "the context retained for it is released";
    EXPECT_EQ(g_fake.pushed, 0);
    g_fake = FakeDriver{};
    g_fake.l2_bytes = 0;
    CudaConditions no_l2(cuda_cell(true, SyncMode::automatic), &kFakeTable);
    EXPECT_THROW(no_l2.after_prepare(), std::runtime_error);
}

TEST_F(CudaConditionsTest, AFlushFailingBetweenIterationsIsAnError) {
    CudaConditions conditions(cuda_cell(true, SyncMode::automatic), &kFakeTable);
    conditions.after_prepare();
    g_fake.fail = "cuCtxSynchronize";
    try {
        conditions.between()->run();
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("CUDA cuMemsetD8Async/cuCtxSynchronize (L2 flush) failed: out of memory"));
    }
    EXPECT_EQ(g_fake.pushed, 0);
}

TEST(CudaDriver, AMissingLibraryIsOneClearError) {
    setenv("INFERBENCH_CUDA_DRIVER_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    try {
        require_driver();
        FAIL() << "expected an error";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("cannot load the CUDA driver: /nonexistent/libcuda.so.1"));
    }
    unsetenv("INFERBENCH_CUDA_DRIVER_LIBRARY");
}

}  // namespace
}  // namespace inferbench::runner
