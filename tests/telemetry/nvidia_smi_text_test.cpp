// nvidia-smi -q text dumps on the real files in shared/fixtures/nvidia-smi: one dump of an idle H200,
// and five concatenated dumps (a "gpu_log") into a power-capped bf16 GEMM. Expected numbers are the
// files' own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_fixtures.hpp"

namespace inferbench::telemetry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::smi_fixture;

TEST(NvidiaSmiText, IdleDumpEveryField) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-idle-q.txt"), "h200-idle-q.txt");
    EXPECT_EQ(log.format, "q-text");
    EXPECT_TRUE(log.warnings.empty());
    EXPECT_EQ(log.driver_version, "580.159.04");
    EXPECT_EQ(log.cuda_version, "13.0");
    EXPECT_THAT(log.gpu_names, ElementsAre("NVIDIA H200"));
    EXPECT_EQ(log.first_unix_ms, 1796003542000);  // Mon Nov 30 01:52:22 2026, read as UTC
    ASSERT_EQ(log.samples.size(), 1u);
    const GpuSample& s = log.samples[0];
    EXPECT_EQ(s.t_ns, 0);
    EXPECT_EQ(s.gpu_index, 0);
    EXPECT_EQ(s.phase, SamplePhase::measure);
    EXPECT_EQ(s.power_w, 79.56);        // GPU Power Readings: Instantaneous Power Draw
    EXPECT_EQ(s.power_avg_w, 107.62);   // Average Power Draw (not the GPU Memory Power Readings' 53.78)
    EXPECT_EQ(s.power_limit_w, 700.0);  // Current Power Limit
    EXPECT_EQ(s.temperature_c, 34.0);
    EXPECT_EQ(s.memory_temperature_c, 34.0);
    EXPECT_EQ(s.sm_clock_mhz, 525.0);
    EXPECT_EQ(s.memory_clock_mhz, 3201.0);  // Clocks, not Applications / Max Clocks
    EXPECT_EQ(s.graphics_clock_mhz, 525.0);
    EXPECT_EQ(s.gpu_util_pct, 0.0);
    EXPECT_EQ(s.memory_util_pct, 0.0);
    EXPECT_EQ(s.fb_used_mib, 0.0);  // FB Memory Usage, not BAR1 (1 MiB)
    EXPECT_EQ(s.fb_total_mib, 143771.0);
    EXPECT_EQ(s.pcie_tx_kib_s, 940.0);
    EXPECT_EQ(s.pcie_rx_kib_s, 564.0);
    EXPECT_EQ(s.pstate, 0);
    EXPECT_EQ(s.clock_event_reasons, clock_event::kGpuIdle);
    EXPECT_FALSE(s.energy_mj);
    EXPECT_FALSE(s.process_fb_mib);
}

TEST(NvidiaSmiText, FiveConcatenatedDumpsIntoAPowerCap) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-load-q-5x1s.txt"), "h200-load-q-5x1s.txt");
    EXPECT_TRUE(log.warnings.empty()) << log.warnings.front();
    ASSERT_EQ(log.samples.size(), 5u);
    EXPECT_EQ(log.first_unix_ms, 1796004035000);  // Mon Nov 30 02:00:35 2026
    // The dumps' own second-resolution timestamps: 02:00:35, :36, :37, :39, :40 (a -q call takes ~135 ms).
    std::vector<std::int64_t> times;
    for (const auto& s : log.samples) times.push_back(s.t_ns);
    EXPECT_THAT(times, ElementsAre(0, 1'000'000'000, 2'000'000'000, 4'000'000'000, 5'000'000'000));

    const GpuSample& idle = log.samples[0];
    EXPECT_EQ(idle.power_w, 76.93);
    EXPECT_EQ(idle.power_avg_w, 76.79);
    EXPECT_EQ(idle.temperature_c, 27.0);
    EXPECT_EQ(idle.sm_clock_mhz, 345.0);
    EXPECT_EQ(idle.pcie_tx_kib_s, 1045.0);
    EXPECT_EQ(idle.pcie_rx_kib_s, 599.0);
    EXPECT_EQ(idle.clock_event_reasons, clock_event::kGpuIdle);

    const GpuSample& capped = log.samples[3];
    EXPECT_EQ(capped.power_w, 734.25);
    EXPECT_EQ(capped.power_avg_w, 600.58);
    EXPECT_EQ(capped.power_limit_w, 700.0);
    EXPECT_EQ(capped.temperature_c, 49.0);
    EXPECT_EQ(capped.memory_temperature_c, 33.0);
    EXPECT_EQ(capped.sm_clock_mhz, 1515.0);
    EXPECT_EQ(capped.graphics_clock_mhz, 1515.0);
    EXPECT_EQ(capped.memory_clock_mhz, 3201.0);
    EXPECT_EQ(capped.gpu_util_pct, 100.0);
    EXPECT_EQ(capped.memory_util_pct, 25.0);
    EXPECT_EQ(capped.fb_used_mib, 1139.0);  // not the process's "Used GPU Memory : 1130 MiB"
    EXPECT_EQ(capped.fb_total_mib, 143771.0);
    EXPECT_EQ(capped.pcie_tx_kib_s, 7894.0);
    EXPECT_EQ(capped.pcie_rx_kib_s, 16983.0);
    EXPECT_EQ(capped.pstate, 0);
    EXPECT_EQ(capped.clock_event_reasons, clock_event::kSwPowerCap) << "Idle no longer active";

    const GpuSample& last = log.samples[4];
    EXPECT_EQ(last.power_w, 587.31);
    EXPECT_EQ(last.power_avg_w, 688.30);
    EXPECT_EQ(last.temperature_c, 52.0);
    EXPECT_EQ(last.memory_temperature_c, 37.0);
    EXPECT_EQ(last.sm_clock_mhz, 1395.0);
    EXPECT_EQ(last.memory_util_pct, 24.0);
    EXPECT_EQ(last.clock_event_reasons, clock_event::kSwPowerCap);
    // The SW power cap transition: not active for the three idle dumps, active once the GEMM runs.
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(*log.samples[i].clock_event_reasons & clock_event::kSwPowerCap, 0u);
}

TEST(NvidiaSmiText, NotAvailableReadingsStayEmpty) {
    std::string text = smi_fixture("h200-idle-q.txt");
    for (const std::string from : {"GPU Current Temp                               : 34 C",
                                   "Instantaneous Power Draw                       : 79.56 W",
                                   "Performance State                                  : P0"}) {
        const std::string to = from.substr(0, from.find(": ") + 2) + "N/A";
        text.replace(text.find(from), from.size(), to);
    }
    const auto log = parse_nvidia_smi_log(text, "na.txt");
    ASSERT_EQ(log.samples.size(), 1u);
    EXPECT_FALSE(log.samples[0].temperature_c);
    EXPECT_FALSE(log.samples[0].power_w) << "not taken from the memory or module readings either";
    EXPECT_FALSE(log.samples[0].pstate);
    EXPECT_EQ(log.samples[0].memory_temperature_c, 34.0);
    EXPECT_TRUE(log.warnings.empty());
}

TEST(NvidiaSmiText, ScriptLinesAroundTheDumpsAreIgnored) {
    // A gpu_log written by `while true; do date; nvidia-smi -q; sleep 1; done`.
    std::string text = smi_fixture("h200-load-q-5x1s.txt");
    for (std::size_t at = text.find("=====");; at = text.find("=====", at + 40)) {
        if (at == std::string::npos) break;
        text.insert(at, "Mon Nov 30 02:00:35 UTC 2026\n");
    }
    const auto log = parse_nvidia_smi_log(text, "dated.txt");
    EXPECT_EQ(log.format, "q-text");
    ASSERT_EQ(log.samples.size(), 5u);
    EXPECT_TRUE(log.warnings.empty());
    EXPECT_EQ(log.samples[4].t_ns, 5'000'000'000);
    EXPECT_EQ(log.samples[4].power_w, 587.31);
}

TEST(NvidiaSmiText, UnreadableTimestampIsAWarningNotATime) {
    std::string text = smi_fixture("h200-idle-q.txt");
    text.replace(text.find("Mon Nov 30 01:52:22 2026"), 24, "Mon Nov 30 01:52:22 1900");
    const auto log = parse_nvidia_smi_log(text, "old.txt");
    ASSERT_EQ(log.samples.size(), 1u);
    EXPECT_FALSE(log.first_unix_ms);
    EXPECT_THAT(log.warnings, ElementsAre("line 4: timestamp 'Mon Nov 30 01:52:22 1900' not understood; ignored"));
}

// The layout of drivers before 535 (and before 530 for power): Power Readings with Power Draw and
// Enforced Power Limit, Clocks Throttle Reasons, "Gpu" utilization; two GPUs in one dump.
constexpr std::string_view kOlderDriverDump = R"(
==============NVSMI LOG==============

Timestamp                                 : Tue Mar  5 09:04:11 2024
Driver Version                            : 470.182.03
CUDA Version                              : 11.4

Attached GPUs                             : 2
GPU 00000000:3B:00.0
    Product Name                          : Tesla V100-PCIE-32GB
    Performance State                     : P0
    Clocks Throttle Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : Active
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : Active
            HW Power Brake Slowdown       : Not Active
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
        Display Clock Setting             : Not Active
    FB Memory Usage
        Total                             : 32510 MiB
        Used                              : 30001 MiB
        Free                              : 2509 MiB
    Utilization
        Gpu                               : 97 %
        Memory                            : 61 %
    Temperature
        GPU Current Temp                  : 83 C
        Memory Current Temp               : N/A
    Power Readings
        Power Management                  : Supported
        Power Draw                        : 249.85 W
        Power Limit                       : 250.00 W
        Default Power Limit               : 250.00 W
        Enforced Power Limit              : 225.00 W
    Clocks
        Graphics                          : 1230 MHz
        SM                                : 1230 MHz
        Memory                            : 877 MHz
    Processes                             : None

GPU 00000000:D8:00.0
    Product Name                          : Tesla V100-PCIE-32GB
    Performance State                     : P8
    Clocks Throttle Reasons               : N/A
    Power Readings
        Power Draw                        : 25.10 W
    Processes                             : None

)";

TEST(NvidiaSmiText, OlderDriverLayoutAndTwoGpus) {
    const auto log = parse_nvidia_smi_log(kOlderDriverDump, "v100.txt");
    EXPECT_EQ(log.driver_version, "470.182.03");
    EXPECT_EQ(log.cuda_version, "11.4");
    EXPECT_EQ(log.first_unix_ms, 1709629451000);  // Tue Mar  5 09:04:11 2024
    EXPECT_THAT(log.gpu_names, ElementsAre("Tesla V100-PCIE-32GB", "Tesla V100-PCIE-32GB"));
    ASSERT_EQ(log.samples.size(), 2u);
    const GpuSample& a = log.samples[0];
    EXPECT_EQ(a.gpu_index, 0);
    EXPECT_EQ(a.power_w, 249.85);
    EXPECT_FALSE(a.power_avg_w);
    EXPECT_EQ(a.power_limit_w, 225.0) << "the enforced limit, not the requested one";
    EXPECT_EQ(a.gpu_util_pct, 97.0);
    EXPECT_EQ(a.memory_util_pct, 61.0);
    EXPECT_EQ(a.temperature_c, 83.0);
    EXPECT_FALSE(a.memory_temperature_c);
    EXPECT_EQ(a.fb_used_mib, 30001.0);
    EXPECT_EQ(a.sm_clock_mhz, 1230.0);
    EXPECT_EQ(a.memory_clock_mhz, 877.0);
    EXPECT_EQ(a.clock_event_reasons, clock_event::kSwPowerCap | clock_event::kHwThermalSlowdown);
    const GpuSample& b = log.samples[1];
    EXPECT_EQ(b.gpu_index, 1);
    EXPECT_EQ(b.pstate, 8);
    EXPECT_EQ(b.power_w, 25.10);
    EXPECT_FALSE(b.clock_event_reasons) << "N/A: not read, not 'none'";
}

TEST(NvidiaSmiText, CutShortFiles) {
    const std::string whole = smi_fixture("h200-load-q-5x1s.txt");
    // Cut inside the 5th dump, after its Utilization section: four whole samples, the partial fifth left out.
    const std::string cut = whole.substr(0, whole.find("Encoder Stats", whole.rfind("NVSMI LOG")));
    const auto log = parse_nvidia_smi_log(cut, "cut.txt");
    ASSERT_EQ(log.samples.size(), 4u);
    EXPECT_THAT(log.warnings, ElementsAre("line 1043: GPU section cut short (no blank line after it, no 'Processes' "
                                          "line); skipped"));

    // Cut before the GPU section: nothing to keep.
    const std::string header_only = whole.substr(0, whole.find("GPU 00000000"));
    try {
        parse_nvidia_smi_log(header_only, "header.txt");
        FAIL();
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("header.txt: nvidia-smi -q output without any GPU section (cut short"));
    }
}

bool same_readings(const GpuSample& a, const GpuSample& b) {
    return a.t_ns == b.t_ns && a.gpu_index == b.gpu_index && a.power_w == b.power_w && a.power_avg_w == b.power_avg_w &&
           a.power_limit_w == b.power_limit_w && a.temperature_c == b.temperature_c &&
           a.memory_temperature_c == b.memory_temperature_c && a.sm_clock_mhz == b.sm_clock_mhz &&
           a.memory_clock_mhz == b.memory_clock_mhz && a.graphics_clock_mhz == b.graphics_clock_mhz &&
           a.gpu_util_pct == b.gpu_util_pct && a.memory_util_pct == b.memory_util_pct &&
           a.fb_used_mib == b.fb_used_mib && a.fb_total_mib == b.fb_total_mib && a.pcie_tx_kib_s == b.pcie_tx_kib_s &&
           a.pcie_rx_kib_s == b.pcie_rx_kib_s && a.pstate == b.pstate && a.clock_event_reasons == b.clock_event_reasons;
}

// The real five-dump log cut at every byte of its last dump and its first GPU section, and every 37th byte
// elsewhere: each cut is refused, or keeps only samples identical to the whole log's (never a partial one).
TEST(NvidiaSmiText, ALogCutAtAnyByteKeepsOnlyWholeSamples) {
    const std::string whole = smi_fixture("h200-load-q-5x1s.txt");
    const auto complete = parse_nvidia_smi_log(whole, "whole.txt");
    ASSERT_EQ(complete.samples.size(), 5u);
    const std::size_t first_end = whole.find("NVSMI LOG", 100) + 200;
    const std::size_t last_begin = whole.rfind("NVSMI LOG") - 100;
    std::size_t refused = 0, cuts = 0;
    for (std::size_t at = 1; at < whole.size(); ++cuts) {
        try {
            const auto log = parse_nvidia_smi_log(whole.substr(0, at), "cut.txt");
            ASSERT_LE(log.samples.size(), complete.samples.size()) << at;
            for (std::size_t i = 0; i < log.samples.size(); ++i)
                ASSERT_TRUE(same_readings(log.samples[i], complete.samples[i])) << "cut at byte " << at << ", sample " << i;
        } catch (const UserError&) {
            ++refused;
        }
        at += at < first_end || at > last_begin ? 1 : 37;
    }
    EXPECT_GT(cuts, 20'000u);
    EXPECT_GT(refused, 1000u) << "a cut inside the first dump keeps nothing";
}

// Readings no GPU gives are left out with one warning that counts them; a time going backwards leaves its
// sample out, counted.
TEST(NvidiaSmiText, ImpossibleReadingsAndTimeGoingBackwardsAreLeftOutAndCounted) {
    std::string text = smi_fixture("h200-load-q-5x1s.txt");
    text.replace(text.find("734.25 W"), 8, "-734.25 W");
    const std::string temp = "GPU Current Temp                               : 49 C";
    text.replace(text.find(temp), temp.size(), "GPU Current Temp                               : 1e308 C");
    text.replace(text.find("Mon Nov 30 02:00:37 2026"), 24, "Mon Nov 30 01:00:37 2026");
    const auto log = parse_nvidia_smi_log(text, "edited.txt");
    ASSERT_EQ(log.samples.size(), 4u);
    EXPECT_THAT(log.warnings, ElementsAre("1 sample whose time goes backwards left out (sample 3 is 3599.000 s before "
                                          "the one it follows)",
                                          "2 readings no GPU can give left out (first: power -734.25 of GPU 0 at 4.000 s)"));
    for (const auto& sample : log.samples) {
        EXPECT_TRUE(!sample.power_w || *sample.power_w >= 0);
        EXPECT_TRUE(!sample.temperature_c || *sample.temperature_c < 200);
    }
}

}  // namespace
}  // namespace inferbench::telemetry
