// The probes of this host as `inferbench probe` runs them: the selection, the CPU identified and
// probed, and no GPU work when none is targeted.
#include "devices/host_probes.hpp"

#include <gtest/gtest.h>

namespace inferbench::devices {
namespace {

TEST(HostProbes, AllSelectsEveryProbeAndNamesSelectThemselves) {
    EXPECT_TRUE(selects({"all"}, "gemm_fp16"));
    EXPECT_TRUE(selects({"dram_copy", "fma_fp32"}, "fma_fp32"));
    EXPECT_FALSE(selects({"dram_copy"}, "fma_fp32"));
    EXPECT_FALSE(selects({}, "fma_fp32"));
}

TEST(HostProbes, TheCpuIsIdentifiedAndOnlyTheSelectedProbesAreKept) {
    ProbeSettings settings;
    settings.probes = {"dram_copy"};
    settings.memory_bytes = 1 << 20;
    settings.repetitions = 1;
    const DeviceProbes cpu = probe_host_cpu(settings);
    EXPECT_TRUE(cpu.key.starts_with("cpu:")) << cpu.key;
    EXPECT_TRUE(cpu.identified.starts_with("/proc/cpuinfo; FMA kernel ")) << cpu.identified;
    EXPECT_TRUE(cpu.computed.has_value());
    ASSERT_EQ(cpu.results.size(), 1u);
    EXPECT_EQ(cpu.results[0].name, "dram_copy");
}

TEST(HostProbes, NoGpuTargetedProbesNoGpu) {
    std::vector<std::string> notes;
    ProbeTargets cpu_only;
    cpu_only.cpu = true;
    EXPECT_TRUE(probe_gpus(cpu_only, {}, Catalog{}, notes).empty());
    ProbeTargets every_gpu;
    every_gpu.all_gpus = true;
    ProbeSettings no_gpu_probe;
    no_gpu_probe.probes = {"no_gpu_probe"};
    EXPECT_TRUE(probe_gpus(every_gpu, no_gpu_probe, Catalog{}, notes).empty()) << "a selection without a GPU probe";
    EXPECT_TRUE(notes.empty());
}

}  // namespace
}  // namespace inferbench::devices
