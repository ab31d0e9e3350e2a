// nvidia-smi dmon on the real files in shared/fixtures/nvidia-smi (idle, and a power-capped load), and
// dmon's other layouts: -o DT time columns, several GPUs, "-" readings, repeated headers.
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

TEST(NvidiaSmiDmon, IdleEveryColumn) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-idle-dmon.txt"), "h200-idle-dmon.txt");
    EXPECT_EQ(log.format, "dmon");
    EXPECT_TRUE(log.warnings.empty());
    EXPECT_FALSE(log.first_unix_ms) << "dmon without -o T prints no time";
    EXPECT_TRUE(log.gpu_names.empty());
    ASSERT_EQ(log.samples.size(), 3u);
    //  gpu  pwr  gtemp  mtemp  sm  mem  enc  dec  jpg  ofa  mclk  pclk
    //    0   99     34     34   0    0    0    0    0    0  3201   480
    const GpuSample& s = log.samples[0];
    EXPECT_EQ(s.t_ns, 0);
    EXPECT_EQ(s.gpu_index, 0);
    EXPECT_EQ(s.power_w, 99.0);
    EXPECT_EQ(s.temperature_c, 34.0);
    EXPECT_EQ(s.memory_temperature_c, 34.0);
    EXPECT_EQ(s.gpu_util_pct, 0.0);
    EXPECT_EQ(s.memory_util_pct, 0.0);
    EXPECT_EQ(s.memory_clock_mhz, 3201.0);
    EXPECT_EQ(s.graphics_clock_mhz, 480.0);
    // dmon's default groups carry none of these.
    EXPECT_FALSE(s.sm_clock_mhz);
    EXPECT_FALSE(s.power_avg_w);
    EXPECT_FALSE(s.power_limit_w);
    EXPECT_FALSE(s.fb_used_mib);
    EXPECT_FALSE(s.pstate);
    EXPECT_FALSE(s.clock_event_reasons) << "dmon has no reasons";
    EXPECT_EQ(log.samples[2].power_w, 78.0);
    EXPECT_EQ(log.samples[2].memory_temperature_c, 33.0);
    EXPECT_EQ(log.samples[2].graphics_clock_mhz, 345.0);
    EXPECT_EQ(log.samples[2].t_ns, 0);
}

TEST(NvidiaSmiDmon, PowerCappedLoad) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-load-dmon.txt"), "h200-load-dmon.txt");
    ASSERT_EQ(log.samples.size(), 4u);
    std::vector<double> power, mtemp, pclk;
    for (const auto& s : log.samples) {
        power.push_back(*s.power_w);
        mtemp.push_back(*s.memory_temperature_c);
        pclk.push_back(*s.graphics_clock_mhz);
        EXPECT_EQ(s.gpu_util_pct, 100.0);
    }
    EXPECT_THAT(power, ElementsAre(689, 690, 689, 691));
    EXPECT_THAT(mtemp, ElementsAre(38, 39, 40, 41));
    EXPECT_THAT(pclk, ElementsAre(1440, 1440, 1440, 1470));
    EXPECT_EQ(log.samples[0].temperature_c, 52.0);
    EXPECT_EQ(log.samples[1].memory_util_pct, 26.0);
}

TEST(NvidiaSmiDmon, DateTimeColumnsSeveralGpusAndMissingReadings) {
    const auto log = parse_nvidia_smi_log(
        "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk     fb   rxpci   txpci \n"
        "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz     MB    MB/s    MB/s \n"
        " 20261130   23:59:59      0    689     52     38    100     24   3201   1440   1139       2       1 \n"
        " 20261130   23:59:59      1     70     30      -      0      0   3201    345      0       0       0 \n"
        "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem   mclk   pclk     fb   rxpci   txpci \n"
        "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      %    MHz    MHz     MB    MB/s    MB/s \n"
        " 20261201   00:00:01      0    690     53     39    100     26   3201   1440   1139       3       1 \n"
        " 20261201   00:00:01      1     71     30      -      0      0   3201    345      0       0       0 \n",
        "dt.txt");
    EXPECT_TRUE(log.warnings.empty());
    ASSERT_EQ(log.samples.size(), 4u);
    EXPECT_EQ(log.first_unix_ms, 1796083199000);  // 2026-11-30 23:59:59
    EXPECT_EQ(log.samples[1].gpu_index, 1);
    EXPECT_EQ(log.samples[1].t_ns, 0);
    EXPECT_FALSE(log.samples[1].memory_temperature_c) << "'-' is no reading";
    EXPECT_EQ(log.samples[2].t_ns, 2'000'000'000) << "across midnight";
    EXPECT_EQ(log.samples[2].fb_used_mib, 1139.0);
    EXPECT_EQ(log.samples[2].pcie_rx_kib_s, 3.0 * 1024);
    EXPECT_EQ(log.samples[2].pcie_tx_kib_s, 1024.0);
    EXPECT_EQ(log.samples[3].gpu_index, 1);
    EXPECT_EQ(log.samples[3].power_w, 71.0);
}

TEST(NvidiaSmiDmon, TimeOfDayOnlyWrapsAtMidnight) {
    const auto log = parse_nvidia_smi_log(
        "#Time        gpu    pwr\n#HH:MM:SS    Idx      W\n 23:59:58      0    689\n 00:00:00      0    690\n",
        "t.txt");
    ASSERT_EQ(log.samples.size(), 2u);
    EXPECT_FALSE(log.first_unix_ms) << "a time of day is no wall-clock";
    EXPECT_EQ(log.samples[1].t_ns, 2'000'000'000);
}

TEST(NvidiaSmiDmon, MalformedLinesAreSkippedWithAWarning) {
    std::string text = smi_fixture("h200-load-dmon.txt");
    text.insert(
        text.find("    0    690"),
        "    0    690     53\n    0    abc     53     39    100     26      0      0      0      0   3201   1440 \n");
    text += "    0    69";  // cut while written
    const auto log = parse_nvidia_smi_log(text, "cut-dmon.txt");
    EXPECT_EQ(log.samples.size(), 4u);
    EXPECT_THAT(log.warnings,
                ElementsAre("line 4: 3 columns, expected 12; skipped", "line 5: 'abc' is not a reading of pwr; skipped",
                            "line 9: 2 columns, expected 12; skipped"));
}

}  // namespace
}  // namespace inferbench::telemetry
