// The NVML reader on a fake libnvidia-ml (fake_nvml.cpp): every metric read with its unit converted,
// unsupported metrics left absent and not asked for again, failures with NVML's own error text, the
// fallbacks of an older driver, and the GPU inventory.
#include <dlfcn.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "telemetry/gpu_inventory.hpp"
#include "telemetry/nvml.hpp"
#include "telemetry/telemetry_env.hpp"

namespace inferbench::telemetry {
namespace {

using ::testing::HasSubstr;
using testing::FakeNvmlScript;
using testing::ScopedEnv;

// How often the fake was asked for gpuN.KEY since nvmlInit.
long calls(const char* key) {
    void* handle = dlopen(FAKE_NVML, RTLD_NOW | RTLD_NOLOAD);
    EXPECT_NE(handle, nullptr);
    const auto fn = reinterpret_cast<long (*)(const char*)>(dlsym(handle, "fake_nvml_calls"));
    const long n = fn ? fn(key) : -1;
    dlclose(handle);
    return n;
}

TEST(Nvml, ReadsEveryMetricOfEveryGpu) {
    FakeNvmlScript script("");
    const auto nvml = Nvml::open(FAKE_NVML);
    ASSERT_EQ(nvml->device_count(), 2);
    EXPECT_EQ(nvml->driver_version(), "580.65.06");
    const GpuIdentity id = nvml->identity(0);
    EXPECT_EQ(id.name, "Fake H200");
    EXPECT_EQ(id.uuid, "GPU-fake-0000");
    EXPECT_EQ(id.pci_bus_id, "00000000:19:00.0");
    EXPECT_EQ(id.pci_device_id, 0x233510DEu);
    EXPECT_EQ(id.memory_total_mib, 143771.0);
    EXPECT_EQ(id.driver_version, "580.65.06");
    EXPECT_EQ(id.default_applications_clock_mhz, 1980.0);

    GpuSample s;
    const std::vector<int> pids = {1};
    nvml->read(0, s, pids);
    EXPECT_EQ(s.power_w, 300.5);
    EXPECT_EQ(s.power_avg_w, 298.0);
    ASSERT_TRUE(s.energy_mj.has_value());
    EXPECT_GE(*s.energy_mj, 1'000'000.0);
    EXPECT_EQ(s.power_limit_w, 700.0);
    EXPECT_EQ(s.temperature_c, 41.0);
    EXPECT_EQ(s.memory_temperature_c, 48.0);
    EXPECT_EQ(s.sm_clock_mhz, 1980.0);
    EXPECT_EQ(s.memory_clock_mhz, 3201.0);
    EXPECT_EQ(s.graphics_clock_mhz, 1980.0);
    EXPECT_EQ(s.gpu_util_pct, 97.0);
    EXPECT_EQ(s.memory_util_pct, 45.0);
    EXPECT_EQ(s.fb_used_mib, 20480.0);
    EXPECT_EQ(s.fb_total_mib, 143771.0);
    EXPECT_EQ(s.pstate, 0);
    EXPECT_EQ(s.clock_event_reasons, 0u);
    EXPECT_EQ(s.process_fb_mib, 1000.0) << "pid 1 holds 1000 MiB on the fake GPU 0";
    EXPECT_FALSE(s.pcie_tx_kib_s.has_value()) << "PCIe is read apart, by read_pcie";
    const PcieThroughput pcie = nvml->read_pcie(0);
    EXPECT_EQ(pcie.tx_kib_s, 1000.0);
    EXPECT_EQ(pcie.rx_kib_s, 2000.0);

    GpuSample second;
    nvml->read(1, second, pids);
    EXPECT_EQ(second.power_w, 150.0);
    EXPECT_EQ(second.clock_event_reasons, clock_event::kGpuIdle);
    EXPECT_FALSE(second.process_fb_mib.has_value()) << "none of the pids runs on GPU 1: absent, not 0";
    EXPECT_TRUE(nvml->notes().empty());
}

TEST(Nvml, EnergyCounterRisesWithThePowerDrawn) {
    FakeNvmlScript script("");
    const auto nvml = Nvml::open(FAKE_NVML);
    GpuSample a, b;
    nvml->read(0, a, {});
    usleep(50'000);
    nvml->read(0, b, {});
    ASSERT_TRUE(a.energy_mj && b.energy_mj);
    // 300.5 W for at least 50 ms: at least 15 J.
    EXPECT_GE(*b.energy_mj - *a.energy_mj, 15'000.0);
}

// A fast round (no slower set): what changes within milliseconds and nothing else; the 1 s average
// power and utilisation (updated by the driver every 1/6 s at best) wait for the slow set, the power
// limit and the worker's GPU memory for the occasional one, the costly energy counter for its own.
TEST(Nvml, EachReadSetReadsItsMetricsAlone) {
    FakeNvmlScript script("gpu0.processes = 1:1000\n");
    const auto nvml = Nvml::open(FAKE_NVML);
    const std::vector<int> pids = {1};
    GpuSample fast;
    nvml->read(0, fast, pids, {.slow = false, .occasional = false, .energy = false});
    EXPECT_EQ(fast.power_w, 300.5);
    EXPECT_EQ(fast.sm_clock_mhz, 1980.0);
    EXPECT_EQ(fast.clock_event_reasons, 0u);
    for (const auto* absent : {&fast.power_avg_w, &fast.gpu_util_pct, &fast.memory_util_pct, &fast.energy_mj,
                               &fast.temperature_c, &fast.memory_temperature_c, &fast.fb_used_mib, &fast.power_limit_w,
                               &fast.process_fb_mib})
        EXPECT_FALSE(absent->has_value());
    EXPECT_EQ(calls("utilization"), 0);

    GpuSample slow;
    nvml->read(0, slow, pids, {.slow = true, .occasional = false, .energy = false});
    EXPECT_EQ(slow.power_avg_w, 298.0);
    EXPECT_EQ(slow.gpu_util_pct, 97.0);
    EXPECT_EQ(slow.memory_temperature_c, 48.0);
    EXPECT_FALSE(slow.fb_used_mib.has_value());
    EXPECT_FALSE(slow.power_limit_w.has_value());
    EXPECT_FALSE(slow.process_fb_mib.has_value());
    EXPECT_FALSE(slow.energy_mj.has_value());

    GpuSample occasional;
    nvml->read(0, occasional, pids, {.slow = false, .occasional = true, .energy = false});
    EXPECT_EQ(occasional.power_limit_w, 700.0);
    EXPECT_EQ(occasional.process_fb_mib, 1000.0);
    EXPECT_EQ(occasional.fb_used_mib, 20480.0);
    EXPECT_FALSE(occasional.gpu_util_pct.has_value());

    GpuSample energy;
    nvml->read(0, energy, pids, {.slow = false, .occasional = false, .energy = true});
    EXPECT_TRUE(energy.energy_mj.has_value());
    EXPECT_FALSE(energy.power_limit_w.has_value());
}

TEST(Nvml, UnsupportedMetricsStayAbsentAndAreNotAskedForAgain) {
    FakeNvmlScript script(
        "gpu0.memory_temp = error:3\n"
        "gpu0.energy_mj = error:3\n"
        "gpu0.pcie_tx_kbs = error:3\n"
        "gpu0.clock_sm = error:4\n"
        "gpu0.temperature = error:21   # no data: asked again\n");
    const auto nvml = Nvml::open(FAKE_NVML);
    for (int round = 0; round < 3; ++round) {
        GpuSample s;
        nvml->read(0, s, {});
        EXPECT_FALSE(s.memory_temperature_c.has_value());
        EXPECT_FALSE(s.energy_mj.has_value());
        EXPECT_FALSE(s.sm_clock_mhz.has_value());
        EXPECT_FALSE(s.temperature_c.has_value());
        EXPECT_EQ(s.power_w, 300.5) << "the other fields of the same call are read";
        EXPECT_EQ(s.memory_clock_mhz, 3201.0);
        const PcieThroughput pcie = nvml->read_pcie(0);
        EXPECT_FALSE(pcie.tx_kib_s.has_value());
        EXPECT_EQ(pcie.rx_kib_s, 2000.0);
    }
    EXPECT_EQ(calls("memory_temp"), 1);
    EXPECT_EQ(calls("clock_sm"), 1);
    EXPECT_EQ(calls("pcie_tx_kbs"), 1);
    EXPECT_EQ(calls("temperature"), 3);
    EXPECT_TRUE(nvml->pcie_supported(0)) << "RX still works";
    EXPECT_THAT(nvml->notes(), ::testing::UnorderedElementsAre(
                                   "GPU 0 memory temperature: Not Supported", "GPU 0 energy counter: Not Supported",
                                   "GPU 0 PCIe TX: Not Supported", "GPU 0 SM clock: Insufficient Permissions",
                                   "GPU 0 temperature: No data (asked again each sample)"));
}

TEST(Nvml, InitFailureSaysWhyInNvmlsWords) {
    FakeNvmlScript script("init = 9\n");
    try {
        Nvml::open(FAKE_NVML);
        FAIL() << "nvmlInit_v2 failed, open must throw";
    } catch (const EnvironmentError& e) {
        EXPECT_STREQ(e.what(), "nvmlInit_v2: Driver Not Loaded");
    }
}

TEST(Nvml, MissingLibrarySaysWhatTheLoaderSaid) {
    try {
        Nvml::open("/nonexistent/libnvidia-ml.so.1");
        FAIL() << "no library there";
    } catch (const EnvironmentError& e) {
        EXPECT_THAT(e.what(), HasSubstr("/nonexistent/libnvidia-ml.so.1: cannot open shared object file"));
    }
}

TEST(Nvml, NotAnNvmlLibraryIsRefused) {
    EXPECT_THROW(Nvml::open("libc.so.6"), EnvironmentError);
}

TEST(Nvml, OlderDriverFallsBackToPowerUsageAndThrottleReasons) {
    FakeNvmlScript script("");
    const auto nvml = Nvml::open(FAKE_NVML_LEGACY);
    GpuSample s;
    nvml->read(1, s, {});
    EXPECT_EQ(s.power_w, 298.0) << "nvmlDeviceGetPowerUsage when the POWER_INSTANT field cannot be asked for";
    EXPECT_FALSE(s.power_avg_w.has_value());
    EXPECT_FALSE(s.memory_temperature_c.has_value());
    EXPECT_EQ(s.clock_event_reasons, clock_event::kGpuIdle) << "from nvmlDeviceGetCurrentClocksThrottleReasons";
    EXPECT_THAT(nvml->notes(), ::testing::Contains("GPU 1 memory temperature: not in this driver's NVML"));
}

TEST(Nvml, FieldValuesCallFailingFallsBackToPowerUsage) {
    FakeNvmlScript script("gpu0.field_values = error:3\n");
    const auto nvml = Nvml::open(FAKE_NVML);
    GpuSample s;
    nvml->read(0, s, {});
    EXPECT_EQ(s.power_w, 298.0);
    EXPECT_FALSE(s.power_avg_w.has_value());
}

TEST(Nvml, ProcessMemoryOfTheGivenPidsAlone) {
    FakeNvmlScript script("gpu0.processes = 4242:100, 4243:28, 77:5000\n");
    const auto nvml = Nvml::open(FAKE_NVML);
    GpuSample s;
    const std::vector<int> tree = {4242, 4243};
    nvml->read(0, s, tree);
    EXPECT_EQ(s.process_fb_mib, 128.0);
}

TEST(Nvml, ADeviceThatCannotBeOpenedIsNotedAndReadsNothing) {
    FakeNvmlScript script("count = 9\n");  // the fake has 8 handles: index 8 fails
    const auto nvml = Nvml::open(FAKE_NVML);
    ASSERT_EQ(nvml->device_count(), 9);
    GpuSample s;
    nvml->read(8, s, {});
    EXPECT_FALSE(s.power_w.has_value());
    EXPECT_THAT(nvml->notes(), ::testing::Contains("GPU 8: cannot be opened: Invalid Argument"));
}

TEST(Nvml, TheDefaultApplicationsClockOfSmElseGraphicsElseNone) {
    FakeNvmlScript script("gpu0.default_clock_sm = error:3\ngpu0.default_clock_graphics = 1755\n"
                          "gpu1.default_clock_sm = error:3\ngpu1.default_clock_graphics = error:3\n");
    const auto nvml = Nvml::open(FAKE_NVML);
    EXPECT_EQ(nvml->identity(0).default_applications_clock_mhz, 1755.0);
    EXPECT_FALSE(nvml->identity(1).default_applications_clock_mhz) << "not known, never 0";
}

TEST(GpuInventory, ListsTheGpusThroughNvml) {
    FakeNvmlScript script("");
    ScopedEnv library("INFERBENCH_NVML_LIBRARY", FAKE_NVML);
    const GpuInventory inventory = list_gpus();
    EXPECT_EQ(inventory.source, "nvml");
    ASSERT_EQ(inventory.gpus.size(), 2u);
    EXPECT_EQ(inventory.gpus[1].index, 1);
    EXPECT_EQ(inventory.gpus[1].name, "Fake H200 (second)");
    EXPECT_EQ(inventory.gpus[1].pci_bus_id, "00000000:3B:00.0");
}

TEST(GpuInventory, ThroughNvidiaSmiWhenNvmlDoesNotOpen) {
    testing::ScratchDir bin;
    bin.write("nvidia-smi",
              "#!/bin/sh\n"
              "echo '0, NVIDIA H200, GPU-aaaa, 00000000:19:00.0, 0x233510DE, 143771, 580.65.06, 1980'\n"
              "echo '1, NVIDIA H200, GPU-bbbb, 00000000:3B:00.0, 0x233510DE, 143771, 580.65.06, [N/A]'\n");
    std::filesystem::permissions(bin.path() / "nvidia-smi", std::filesystem::perms::owner_all);
    ScopedEnv library("INFERBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    ScopedEnv path("PATH", bin.path().string() + ":/usr/bin:/bin");
    const GpuInventory inventory = list_gpus();
    EXPECT_EQ(inventory.source, "nvidia-smi");
    ASSERT_EQ(inventory.gpus.size(), 2u);
    EXPECT_EQ(inventory.gpus[1].uuid, "GPU-bbbb");
    EXPECT_EQ(inventory.gpus[1].pci_device_id, 0x233510DEu);
    EXPECT_EQ(inventory.gpus[1].memory_total_mib, 143771.0);
    EXPECT_EQ(inventory.gpus[1].driver_version, "580.65.06");
    EXPECT_EQ(inventory.gpus[0].default_applications_clock_mhz, 1980.0);
    EXPECT_FALSE(inventory.gpus[1].default_applications_clock_mhz);
}

TEST(GpuInventory, NoneWithTheReasons) {
    testing::ScratchDir empty_bin;
    ScopedEnv library("INFERBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    ScopedEnv path("PATH", empty_bin.path().string());
    const GpuInventory inventory = list_gpus();
    EXPECT_TRUE(inventory.gpus.empty());
    EXPECT_EQ(inventory.source, "");
    EXPECT_THAT(inventory.unavailable, HasSubstr("NVML: /nonexistent/libnvidia-ml.so.1: cannot open shared object file"));
    EXPECT_THAT(inventory.unavailable, HasSubstr("nvidia-smi not found on PATH"));
}

}  // namespace
}  // namespace inferbench::telemetry
