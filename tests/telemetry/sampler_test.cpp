// The sampler against the fake NVML and a real child process: its rate, its clock, the phases set from
// outside, the sources it reports, the nvidia-smi fallback (a scripted stand-in on PATH) and no GPU.
#include <unistd.h>

#include <algorithm>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/clock.hpp"
#include "core/process/subprocess.hpp"
#include "telemetry/sampler.hpp"
#include "telemetry/telemetry_env.hpp"

namespace inferbench::telemetry {
namespace {

using ::testing::HasSubstr;
using testing::FakeNvmlScript;
using testing::ScopedEnv;

const TelemetrySource* find_source(const std::vector<TelemetrySource>& sources, const std::string& name) {
    for (const auto& s : sources)
        if (s.source == name) return &s;
    return nullptr;
}

// Runs a sampler on a sleeping child for 100 ms in each of load, warmup and measure.
SamplerResult sample_three_phases(const GpuAccess& access, double rate_hz) {
    Child child = spawn({"/bin/sleep", "5"});
    Sampler sampler(access, {.rate_hz = rate_hz, .expected_ns = 1'000'000'000});
    sampler.start(child.pid());
    usleep(100'000);
    sampler.set_phase(SamplePhase::warmup);
    usleep(100'000);
    sampler.set_phase(SamplePhase::measure);
    usleep(100'000);
    return sampler.stop();
}

TEST(Sampler, RatePhasesAndClockAgainstTheFakeNvml) {
    FakeNvmlScript script("gpu0.processes = children:512\n");
    const GpuAccess access = open_gpu_access(GpuMode::nvml, FAKE_NVML);
    ASSERT_TRUE(access.nvml) << access.sources.front().detail;
    const std::int64_t before = monotonic_ns();
    const SamplerResult result = sample_three_phases(access, 50);
    const std::int64_t after = monotonic_ns();

    // 300 ms at 50 Hz: 15 rounds, one more at the start and one of the GPUs when it stops; a loaded
    // machine may skip a few deadlines.
    EXPECT_GE(result.rounds, 13);
    EXPECT_LE(result.rounds, 18);
    EXPECT_EQ(static_cast<std::int64_t>(result.gpu.size()), 2 * result.rounds) << "every round reads both GPUs";
    // The CPU side at most every 100 ms: 0, 100, 200 (and 300) ms.
    EXPECT_GE(result.cpu.size(), 3u);
    EXPECT_LE(result.cpu.size(), 4u);
    EXPECT_GT(result.thread_cpu_ns, 0);
    std::map<int, std::int64_t> last_t;
    std::map<SamplePhase, int> phases;
    int with_pcie = 0, with_temperature = 0, with_power_limit = 0;
    std::map<std::pair<int, SamplePhase>, int> energy_reads;  // per GPU and phase
    for (const auto& s : result.gpu) {
        EXPECT_GE(s.t_ns, before);
        EXPECT_LE(s.t_ns, after);
        EXPECT_GE(s.t_ns, last_t[s.gpu_index]) << "monotonic per GPU";
        last_t[s.gpu_index] = s.t_ns;
        ++phases[s.phase];
        EXPECT_EQ(s.power_w, s.gpu_index == 0 ? 300.5 : 150.0);
        with_pcie += s.pcie_tx_kib_s ? 1 : 0;
        with_temperature += s.temperature_c ? 1 : 0;
        EXPECT_TRUE(s.sm_clock_mhz.has_value()) << "read every round";
        int& reads = energy_reads[std::make_pair(s.gpu_index, s.phase)];
        if (s.energy_mj) {
            EXPECT_EQ(reads++, 0) << "the costly energy counter: once per phase here";
        } else {
            EXPECT_GT(reads, 0) << "the energy counter is read first in each phase";
        }
        EXPECT_EQ(s.gpu_util_pct.has_value(), s.temperature_c.has_value()) << "utilisation with the slow metrics";
        if (s.power_limit_w) {
            ++with_power_limit;
            EXPECT_TRUE(s.temperature_c.has_value()) << "the once-a-second set comes with a slow round";
            if (s.gpu_index == 0) {
                EXPECT_EQ(s.process_fb_mib, 512.0) << "the child's memory on GPU 0, read once a second";
            }
        } else {
            EXPECT_FALSE(s.process_fb_mib.has_value());
        }
    }
    EXPECT_EQ(with_power_limit, 6) << "300 ms: the once-a-second set on the first round of each phase alone, both GPUs";
    EXPECT_GE(phases[SamplePhase::load], 8);
    EXPECT_GE(phases[SamplePhase::warmup], 8);
    EXPECT_GE(phases[SamplePhase::measure], 8);
    EXPECT_GT(with_pcie, 0) << "PCIe readings of the helper thread reach the samples";
    EXPECT_EQ(static_cast<std::size_t>(with_temperature), 2 * result.cpu.size()) << "slow metrics with the CPU side";
    // Rounds on absolute deadlines, 20 ms apart: the median spacing is the period.
    std::vector<std::int64_t> gaps;
    for (std::size_t i = 2; i < result.gpu.size(); i += 2) gaps.push_back(result.gpu[i].t_ns - result.gpu[i - 2].t_ns);
    std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
    EXPECT_NEAR(static_cast<double>(gaps[gaps.size() / 2]), 20e6, 3e6);
    for (std::size_t i = 1; i < result.cpu.size(); ++i) EXPECT_GT(result.cpu[i].t_ns, result.cpu[i - 1].t_ns);
    EXPECT_GT(result.cpu.back().process_rss_mib.value_or(0), 0.0);
    // The host once a second and on the first round of each phase: three times in these 300 ms.
    std::map<SamplePhase, int> host_readings;
    for (const auto& c : result.cpu)
        if (c.host_memory_total_mib) ++host_readings[c.phase];
    EXPECT_EQ(host_readings, (std::map<SamplePhase, int>{{SamplePhase::load, 1}, {SamplePhase::warmup, 1}, {SamplePhase::measure, 1}}));
    EXPECT_TRUE(result.cpu.front().host_memory_total_mib.has_value());

    const auto* nvml = find_source(result.sources, "nvml");
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(nvml->status, "ok");
    EXPECT_EQ(nvml->detail, "2 GPUs, driver 580.65.06");
    const auto* procfs = find_source(result.sources, "procfs");
    ASSERT_NE(procfs, nullptr);
    EXPECT_EQ(procfs->status, "ok");
    EXPECT_NE(find_source(result.sources, "rapl"), nullptr) << "ok or unavailable, with the reason";
}

TEST(Sampler, UnsupportedMetricsAreAbsentAndNamedInTheSource) {
    FakeNvmlScript script("count = 1\ngpu0.memory_temp = error:3\n");
    const GpuAccess access = open_gpu_access(GpuMode::automatic, FAKE_NVML);
    const SamplerResult result = sample_three_phases(access, 20);
    ASSERT_FALSE(result.gpu.empty());
    for (const auto& s : result.gpu) EXPECT_FALSE(s.memory_temperature_c.has_value());
    const auto* nvml = find_source(result.sources, "nvml");
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(nvml->detail, "1 GPU, driver 580.65.06; GPU 0 memory temperature: Not Supported");
}

TEST(Sampler, WithoutNvmlOrNvidiaSmiTheCpuIsStillSampled) {
    testing::ScratchDir empty_bin;
    ScopedEnv path("PATH", empty_bin.path().string());
    const GpuAccess access = open_gpu_access(GpuMode::automatic, "/nonexistent/libnvidia-ml.so.1");
    EXPECT_FALSE(access.nvml);
    const SamplerResult result = sample_three_phases(access, 20);
    EXPECT_TRUE(result.gpu.empty());
    // Without a GPU to read, rounds come every 100 ms: 0, 100, 200 ms (a slow start may skip one).
    EXPECT_GE(result.cpu.size(), 2u);
    EXPECT_LE(result.cpu.size(), 4u);
    const auto* nvml = find_source(result.sources, "nvml");
    ASSERT_NE(nvml, nullptr);
    EXPECT_EQ(nvml->status, "unavailable");
    EXPECT_THAT(nvml->detail, HasSubstr("/nonexistent/libnvidia-ml.so.1: cannot open shared object file"));
    const auto* smi = find_source(result.sources, "nvidia-smi");
    ASSERT_NE(smi, nullptr);
    EXPECT_EQ(smi->status, "unavailable");
    EXPECT_EQ(smi->detail, "nvidia-smi not found on PATH");
    EXPECT_EQ(find_source(result.sources, "procfs")->status, "ok");
}

TEST(Sampler, GpuOffRecordsWhy) {
    const GpuAccess access = open_gpu_access(GpuMode::off, FAKE_NVML);
    ASSERT_EQ(access.sources.size(), 1u);
    EXPECT_EQ(access.sources[0].status, "unavailable");
    EXPECT_EQ(access.sources[0].detail, "GPU telemetry turned off (telemetry_gpu=off)");
}

TEST(Sampler, NvidiaSmiFallbackStampsLinesOnReceipt) {
    testing::ScratchDir bin;
    // A stand-in nvidia-smi: an older driver's field list, then two GPUs every 20 ms and one bad line.
    bin.write("nvidia-smi",
              "#!/bin/sh\n"
              "case \"$1\" in\n"
              "  --help-query-gpu) printf '\"index\"\\n\"power.draw\"\\n\"temperature.gpu\"\\n\"clocks.sm\"\\n'; exit 0;;\n"
              "esac\n"
              "[ \"$1\" = '--query-gpu=index,power.draw,temperature.gpu,clocks.sm' ] || { echo \"bad args: $*\" >&2; exit 2; }\n"
              "echo 'garbage'\n"
              "while :; do echo '0, 250.50, 40, 1980'; echo '1, 90.25, 33, 1410'; sleep 0.02; done\n");
    std::filesystem::permissions(bin.path() / "nvidia-smi", std::filesystem::perms::owner_all);
    ScopedEnv path("PATH", bin.path().string() + ":/usr/bin:/bin");
    const GpuAccess access = open_gpu_access(GpuMode::automatic, "/nonexistent/libnvidia-ml.so.1");
    ASSERT_FALSE(access.smi_fields.empty());
    const std::int64_t before = monotonic_ns();
    const SamplerResult result = sample_three_phases(access, 50);
    ASSERT_GE(result.gpu.size(), 6u);
    std::map<SamplePhase, int> phases;
    for (const auto& s : result.gpu) {
        EXPECT_GE(s.t_ns, before);
        EXPECT_EQ(s.power_w, s.gpu_index == 0 ? 250.5 : 90.25);
        EXPECT_EQ(s.sm_clock_mhz, s.gpu_index == 0 ? 1980.0 : 1410.0);
        ++phases[s.phase];
    }
    EXPECT_GT(phases[SamplePhase::measure], 0);
    const auto* smi = find_source(result.sources, "nvidia-smi");
    ASSERT_NE(smi, nullptr);
    EXPECT_EQ(smi->status, "ok");
    EXPECT_THAT(smi->detail, HasSubstr("(1 rejected), fields index,power.draw,temperature.gpu,clocks.sm"));
    EXPECT_EQ(find_source(result.sources, "nvml")->status, "unavailable");
}

TEST(Sampler, NvidiaSmiThatFailsIsRecordedWithItsMessage) {
    testing::ScratchDir bin;
    bin.write("nvidia-smi",
              "#!/bin/sh\n"
              "[ \"$1\" = --help-query-gpu ] && { echo '\"index\" \"power.draw\"'; exit 0; }\n"
              "echo 'NVIDIA-SMI has failed because it could not communicate with the NVIDIA driver.' >&2; exit 9\n");
    std::filesystem::permissions(bin.path() / "nvidia-smi", std::filesystem::perms::owner_all);
    ScopedEnv path("PATH", bin.path().string() + ":/usr/bin:/bin");
    const GpuAccess access = open_gpu_access(GpuMode::nvidia_smi);
    const SamplerResult result = sample_three_phases(access, 20);
    const auto* smi = find_source(result.sources, "nvidia-smi");
    ASSERT_NE(smi, nullptr);
    EXPECT_EQ(smi->status, "unavailable");
    EXPECT_THAT(smi->detail, HasSubstr("could not communicate with the NVIDIA driver"));
    EXPECT_EQ(find_source(result.sources, "nvml"), nullptr) << "nvidia-smi was asked for alone";
}

TEST(AlignPhases, TheIterationsDecideWhatWasMeasured) {
    std::vector<GpuSample> gpu(6);
    const SamplePhase told[] = {SamplePhase::load, SamplePhase::warmup, SamplePhase::measure,
                                SamplePhase::warmup, SamplePhase::measure, SamplePhase::measure};
    for (std::size_t i = 0; i < gpu.size(); ++i) {
        gpu[i].t_ns = static_cast<std::int64_t>(i) * 100;
        gpu[i].phase = told[i];
    }
    std::vector<CpuSample> cpu(1);
    cpu[0].t_ns = 450;
    cpu[0].phase = SamplePhase::teardown;
    align_phases(gpu, cpu, 250, 420);
    EXPECT_EQ(gpu[0].phase, SamplePhase::load);
    EXPECT_EQ(gpu[1].phase, SamplePhase::warmup);
    EXPECT_EQ(gpu[2].phase, SamplePhase::warmup) << "the event came before measuring began";
    EXPECT_EQ(gpu[3].phase, SamplePhase::measure) << "the event was late";
    EXPECT_EQ(gpu[4].phase, SamplePhase::measure);
    EXPECT_EQ(gpu[5].phase, SamplePhase::teardown);
    EXPECT_EQ(cpu[0].phase, SamplePhase::teardown);
}

TEST(GpuMode, ParsedAndPrinted) {
    for (const auto* name : {"auto", "nvml", "nvidia-smi", "off"}) EXPECT_EQ(to_string(*parse_gpu_mode(name)), name);
    EXPECT_FALSE(parse_gpu_mode("cuda").has_value());
}

}  // namespace
}  // namespace inferbench::telemetry
