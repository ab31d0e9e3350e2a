// nvidia-smi --query-gpu: the sampler's field list, command and line parser, and whole CSV logs on the
// real files in shared/fixtures/nvidia-smi (every expected number is copied from the file's text).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "core/error.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_fixtures.hpp"

namespace inferbench::telemetry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::smi_fixture;

TEST(NvidiaSmiQuery, FieldListCoversEverySampleMetricIndexFirst) {
    EXPECT_THAT(
        nvidia_smi_query_fields(),
        ElementsAre("index", "power.draw.instant", "power.draw.average", "enforced.power.limit", "temperature.gpu",
                    "temperature.memory", "clocks.sm", "clocks.mem", "clocks.gr", "utilization.gpu",
                    "utilization.memory", "memory.used", "memory.total", "pstate", "clocks_event_reasons.active"));
}

TEST(NvidiaSmiQuery, CommandStreamsNoheaderNounitsEveryPeriod) {
    const std::string query =
        "--query-gpu=index,power.draw.instant,power.draw.average,enforced.power.limit,temperature.gpu,"
        "temperature.memory,clocks.sm,clocks.mem,clocks.gr,utilization.gpu,utilization.memory,memory.used,"
        "memory.total,pstate,clocks_event_reasons.active";
    EXPECT_THAT(nvidia_smi_query_command(100),
                ElementsAre("nvidia-smi", query, "--format=csv,noheader,nounits", "-lms", "100"));
    EXPECT_THAT(nvidia_smi_query_command(250, 3),
                ElementsAre("nvidia-smi", query, "--format=csv,noheader,nounits", "-lms", "250", "-i", "3"));
    EXPECT_THAT(
        nvidia_smi_query_command(50, std::nullopt, {"index", "power.draw"}),
        ElementsAre("nvidia-smi", "--query-gpu=index,power.draw", "--format=csv,noheader,nounits", "-lms", "50"));
    EXPECT_THROW(nvidia_smi_query_command(0), std::invalid_argument);
}

TEST(NvidiaSmiQuery, SupportedFieldsFallBackToOlderNames) {
    // How `nvidia-smi --help-query-gpu` of a 525 driver lists fields: each name in double quotes.
    const std::string help =
        "\"index\"\nZero based index of the GPU.\n\n\"power.draw\"\nThe last measured power draw.\n\n"
        "\"enforced.power.limit\"\nThe power management algorithm's power ceiling.\n\n"
        "\"temperature.gpu\"\nCore GPU temperature.\n\n\"clocks.current.sm\" or \"clocks.sm\"\nSM clock.\n\n"
        "\"clocks.current.memory\" or \"clocks.mem\"\nMemory clock.\n\n\"clocks.current.graphics\" or \"clocks.gr\"\n\n"
        "\"utilization.gpu\"\n\n\"utilization.memory\"\n\n\"memory.used\"\n\n\"memory.total\"\n\n\"pstate\"\n\n"
        "\"clocks_throttle_reasons.active\"\nBitmask of active clock throttle reasons.\n";
    EXPECT_THAT(nvidia_smi_supported_query_fields(help),
                ElementsAre("index", "power.draw", "enforced.power.limit", "temperature.gpu", "clocks.sm", "clocks.mem",
                            "clocks.gr", "utilization.gpu", "utilization.memory", "memory.used", "memory.total",
                            "pstate", "clocks_throttle_reasons.active"));
    std::string recent;
    for (const auto& field : nvidia_smi_query_fields()) recent += "\"" + field + "\"\ndescription\n\n";
    EXPECT_EQ(nvidia_smi_supported_query_fields(recent), nvidia_smi_query_fields());
}

// The 4th dump of h200-load-q-5x1s.txt as `--format=csv,noheader,nounits` prints it.
constexpr std::string_view kLoadLine =
    "0, 734.25, 600.58, 700.00, 49, 33, 1515, 3201, 1515, 100, 25, 1139, 143771, P0, 0x0000000000000004";

TEST(NvidiaSmiQuery, LineWithTheSamplersFieldsSetsEveryMetric) {
    const auto sample = parse_nvidia_smi_query_line(kLoadLine, nvidia_smi_query_fields());
    ASSERT_TRUE(sample);
    EXPECT_EQ(sample->gpu_index, 0);
    EXPECT_EQ(sample->t_ns, 0);
    EXPECT_EQ(sample->power_w, 734.25);
    EXPECT_EQ(sample->power_avg_w, 600.58);
    EXPECT_EQ(sample->power_limit_w, 700.0);
    EXPECT_EQ(sample->temperature_c, 49.0);
    EXPECT_EQ(sample->memory_temperature_c, 33.0);
    EXPECT_EQ(sample->sm_clock_mhz, 1515.0);
    EXPECT_EQ(sample->memory_clock_mhz, 3201.0);
    EXPECT_EQ(sample->graphics_clock_mhz, 1515.0);
    EXPECT_EQ(sample->gpu_util_pct, 100.0);
    EXPECT_EQ(sample->memory_util_pct, 25.0);
    EXPECT_EQ(sample->fb_used_mib, 1139.0);
    EXPECT_EQ(sample->fb_total_mib, 143771.0);
    EXPECT_EQ(sample->pstate, 0);
    EXPECT_EQ(sample->clock_event_reasons, clock_event::kSwPowerCap);
    EXPECT_FALSE(sample->energy_mj);
    EXPECT_FALSE(sample->pcie_tx_kib_s);
    EXPECT_FALSE(sample->process_fb_mib);
}

TEST(NvidiaSmiQuery, NotAvailableMarkersLeaveTheMetricEmpty) {
    const auto sample = parse_nvidia_smi_query_line(
        "2, [N/A], 76.79, N/A, 27, [Not Supported], 345, 3201, 345, 0, 0, 0, 143771, [Unknown Error], [N/A]\r",
        nvidia_smi_query_fields());
    ASSERT_TRUE(sample);
    EXPECT_EQ(sample->gpu_index, 2);
    EXPECT_FALSE(sample->power_w);
    EXPECT_EQ(sample->power_avg_w, 76.79);
    EXPECT_FALSE(sample->power_limit_w);
    EXPECT_FALSE(sample->memory_temperature_c);
    EXPECT_EQ(sample->fb_used_mib, 0.0) << "0 is a reading, not a missing one";
    EXPECT_FALSE(sample->pstate);
    EXPECT_FALSE(sample->clock_event_reasons);
}

TEST(NvidiaSmiQuery, HeaderNamesWithUnitsAndValuesWithUnitsParse) {
    const std::vector<std::string> fields = {"index",
                                             "power.draw [W]",
                                             "clocks.current.sm [MHz]",
                                             "utilization.gpu [%]",
                                             "memory.used [MiB]",
                                             "clocks_throttle_reasons.active",
                                             "name",
                                             "uuid"};
    const auto sample = parse_nvidia_smi_query_line(
        "1, 250.12 W, 1980 MHz, 80 %, 1139 MiB, 0x0000000000000001, NVIDIA H200, GPU-00000000", fields);
    ASSERT_TRUE(sample);
    EXPECT_EQ(sample->gpu_index, 1);
    EXPECT_EQ(sample->power_w, 250.12) << "power.draw stands in for power.draw.instant";
    EXPECT_EQ(sample->sm_clock_mhz, 1980.0);
    EXPECT_EQ(sample->gpu_util_pct, 80.0);
    EXPECT_EQ(sample->fb_used_mib, 1139.0);
    EXPECT_EQ(sample->clock_event_reasons, clock_event::kGpuIdle);
    // power.draw.instant wins over power.draw, enforced.power.limit over power.limit, whatever the order.
    const auto both = parse_nvidia_smi_query_line(
        "700.00, 77.10, 450.00, 76.93", {"power.limit", "power.draw", "enforced.power.limit", "power.draw.instant"});
    ASSERT_TRUE(both);
    EXPECT_EQ(both->power_w, 76.93);
    EXPECT_EQ(both->power_limit_w, 450.0);
}

TEST(NvidiaSmiQuery, MalformedLinesAreRefused) {
    const auto& fields = nvidia_smi_query_fields();
    EXPECT_FALSE(parse_nvidia_smi_query_line("0, 734.25, 600.58", fields)) << "3 columns of 15";
    EXPECT_FALSE(parse_nvidia_smi_query_line(std::string(kLoadLine) + ", 7", fields)) << "16 columns";
    EXPECT_FALSE(parse_nvidia_smi_query_line("", fields));
    std::string bad = std::string(kLoadLine);
    EXPECT_FALSE(parse_nvidia_smi_query_line(std::regex_replace(bad, std::regex("734.25"), "abc"), fields));
    EXPECT_FALSE(parse_nvidia_smi_query_line(std::regex_replace(bad, std::regex("734.25"), "734.25 MHz"), fields))
        << "a unit that is not the field's";
    EXPECT_FALSE(parse_nvidia_smi_query_line(std::regex_replace(bad, std::regex("P0"), "P16"), fields));
    EXPECT_FALSE(parse_nvidia_smi_query_line(std::regex_replace(bad, std::regex("0x0000000000000004"), "4"), fields));
    EXPECT_FALSE(parse_nvidia_smi_query_line(std::regex_replace(bad, std::regex("^0,"), "x,"), fields)) << "index";
}

TEST(NvidiaSmiQueryLog, IdleFixtureWithUnitsAndHeader) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-idle-query.csv"), "h200-idle-query.csv");
    EXPECT_EQ(log.format, "query-csv");
    ASSERT_EQ(log.samples.size(), 1u);
    EXPECT_TRUE(log.warnings.empty());
    EXPECT_EQ(log.first_unix_ms, 1796003544473);  // 2026/11/30 01:52:24.473, read as UTC
    EXPECT_THAT(log.gpu_names, ElementsAre("NVIDIA H200"));
    EXPECT_EQ(log.driver_version, "");
    const GpuSample& s = log.samples[0];
    EXPECT_EQ(s.t_ns, 0);
    EXPECT_EQ(s.gpu_index, 0);
    EXPECT_EQ(s.power_w, 78.37);
    EXPECT_EQ(s.temperature_c, 34.0);
    EXPECT_EQ(s.sm_clock_mhz, 345.0);
    EXPECT_EQ(s.gpu_util_pct, 0.0);
    EXPECT_EQ(s.memory_util_pct, 0.0);
    EXPECT_EQ(s.fb_used_mib, 0.0);
    // Not asked for in that query: empty.
    EXPECT_FALSE(s.power_avg_w);
    EXPECT_FALSE(s.power_limit_w);
    EXPECT_FALSE(s.memory_clock_mhz);
    EXPECT_FALSE(s.graphics_clock_mhz);
    EXPECT_FALSE(s.fb_total_mib);
    EXPECT_FALSE(s.pstate);
    EXPECT_FALSE(s.clock_event_reasons);
}

TEST(NvidiaSmiQueryLog, PowerCappedLoadEvery200ms) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-load-query-200ms.csv"), "h200-load-query-200ms.csv");
    ASSERT_EQ(log.samples.size(), 10u);
    EXPECT_EQ(log.first_unix_ms, 1796004044465);  // 2026/11/30 02:00:44.465
    const GpuSample& first = log.samples[0];
    EXPECT_EQ(first.t_ns, 0);
    EXPECT_EQ(first.power_w, 691.39);
    EXPECT_EQ(first.temperature_c, 53.0);
    EXPECT_EQ(first.sm_clock_mhz, 1470.0);
    EXPECT_EQ(first.memory_clock_mhz, 3201.0);
    EXPECT_EQ(first.gpu_util_pct, 100.0);
    EXPECT_EQ(first.memory_util_pct, 24.0);
    EXPECT_EQ(first.fb_used_mib, 1139.0);
    EXPECT_EQ(first.clock_event_reasons, clock_event::kSwPowerCap);
    const GpuSample& third = log.samples[2];  // 02:00:44.871
    EXPECT_EQ(third.t_ns, 406'000'000);
    EXPECT_EQ(third.power_w, 691.68);
    EXPECT_EQ(third.sm_clock_mhz, 1500.0);
    EXPECT_EQ(third.memory_util_pct, 25.0);
    const GpuSample& last = log.samples[9];  // 02:00:46.273
    EXPECT_EQ(last.t_ns, 1'808'000'000);
    EXPECT_EQ(last.power_w, 690.02);
    for (const auto& s : log.samples) {
        EXPECT_EQ(s.clock_event_reasons, clock_event::kSwPowerCap);
        EXPECT_EQ(s.gpu_index, 0);
    }
}

// The fixture as `--format=csv,nounits` writes it: units in the header only.
std::string without_units(std::string csv) {
    for (const char* unit : {" W,", " MHz,", " %,", " MiB,"}) {
        const std::string from = unit;
        for (std::size_t at = csv.find(from); at != std::string::npos; at = csv.find(from))
            csv.replace(at, from.size(), ",");
    }
    return csv;
}

TEST(NvidiaSmiQueryLog, ValuesWithAndWithoutUnitsReadTheSame) {
    const std::string with_units = smi_fixture("h200-load-query-200ms.csv");
    const std::string bare = without_units(with_units);
    ASSERT_NE(bare, with_units);
    ASSERT_THAT(bare, HasSubstr("NVIDIA H200, 691.39, 53, 1470, 3201, 100, 24, 1139, 0x0000000000000004"));
    const auto a = parse_nvidia_smi_log(with_units, "units.csv");
    const auto b = parse_nvidia_smi_log(bare, "nounits.csv");
    ASSERT_EQ(a.samples.size(), b.samples.size());
    for (std::size_t i = 0; i < a.samples.size(); ++i) {
        EXPECT_EQ(a.samples[i].power_w, b.samples[i].power_w);
        EXPECT_EQ(a.samples[i].sm_clock_mhz, b.samples[i].sm_clock_mhz);
        EXPECT_EQ(a.samples[i].memory_util_pct, b.samples[i].memory_util_pct);
        EXPECT_EQ(a.samples[i].fb_used_mib, b.samples[i].fb_used_mib);
        EXPECT_EQ(a.samples[i].t_ns, b.samples[i].t_ns);
    }
}

TEST(NvidiaSmiQueryLog, HeaderlessLogOfTheSamplersOwnFields) {
    const std::string csv =
        std::string(kLoadLine) + "\n" +
        "1, 80.00, 79.00, 700.00, 30, 28, 345, 3201, 345, 0, 0, 0, 143771, P0, 0x0000000000000001\n";
    const auto log = parse_nvidia_smi_log(csv, "sampler.csv");
    EXPECT_EQ(log.format, "query-csv");
    ASSERT_EQ(log.samples.size(), 2u);
    EXPECT_EQ(log.samples[0].power_w, 734.25);
    EXPECT_EQ(log.samples[1].gpu_index, 1);
    EXPECT_EQ(log.samples[1].clock_event_reasons, clock_event::kGpuIdle);
    EXPECT_FALSE(log.first_unix_ms);
    EXPECT_EQ(log.samples[1].t_ns, 0) << "no time in the log";
    // Headerless with other fields: given by the caller.
    const auto other = parse_nvidia_smi_log("2026/11/30 02:00:44.465, 691.39\n2026/11/30 02:00:44.671, 692.90\n",
                                            "two.csv", {"timestamp", "power.draw"});
    ASSERT_EQ(other.samples.size(), 2u);
    EXPECT_EQ(other.samples[1].t_ns, 206'000'000);
    EXPECT_EQ(other.samples[1].power_w, 692.90);
}

TEST(NvidiaSmiQueryLog, SeveralGpusByIndexOrByUuid) {
    const auto by_index = parse_nvidia_smi_log(
        "index, name, power.draw [W]\n0, NVIDIA H200, 691.39 W\n1, NVIDIA H100 80GB HBM3, 402.10 W\n"
        "0, NVIDIA H200, 692.90 W\n1, NVIDIA H100 80GB HBM3, 401.00 W\n",
        "two-gpus.csv");
    ASSERT_EQ(by_index.samples.size(), 4u);
    EXPECT_THAT(by_index.gpu_names, ElementsAre("NVIDIA H200", "NVIDIA H100 80GB HBM3"));
    EXPECT_EQ(by_index.samples[3].gpu_index, 1);
    EXPECT_EQ(by_index.samples[3].power_w, 401.0);
    const auto by_uuid =
        parse_nvidia_smi_log("uuid, power.draw [W]\nGPU-bbbb, 10 W\nGPU-aaaa, 20 W\nGPU-bbbb, 11 W\n", "uuids.csv");
    ASSERT_EQ(by_uuid.samples.size(), 3u);
    EXPECT_EQ(by_uuid.samples[0].gpu_index, 0);
    EXPECT_EQ(by_uuid.samples[1].gpu_index, 1);
    EXPECT_EQ(by_uuid.samples[2].gpu_index, 0);
}

TEST(NvidiaSmiQueryLog, MalformedLinesAreSkippedWithAWarning) {
    std::string csv = smi_fixture("h200-load-query-200ms.csv");
    csv.insert(csv.find("2026/11/30 02:00:45.071"), "2026/11/30 02:00:44.9, NVIDIA H200, 1 W\n");
    csv.insert(csv.find("2026/11/30 02:00:45.272"),
               "2026/11/30 02:00:45.100, NVIDIA H200, lots W, 53, 1470 MHz, 3201 MHz, 100 %, 24 %, 1139 MiB, 0x4\n");
    csv += "2026/11/30 02:00:46.473, NVIDIA H200, 69";  // cut while written
    const auto log = parse_nvidia_smi_log(csv, "cut.csv");
    EXPECT_EQ(log.samples.size(), 10u);
    EXPECT_THAT(log.warnings, ElementsAre("line 5: 3 columns, expected 10; skipped",
                                          "line 7: 'lots W' is not a reading of power.draw; skipped",
                                          "line 14: 3 columns, expected 10; skipped"));
}

TEST(NvidiaSmiQueryLog, UselessOrForeignCsvIsRefused) {
    try {
        parse_nvidia_smi_log("name, fan.speed [%]\nNVIDIA H200, 30 %\n", "fans.csv");
        FAIL() << "no reading column";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(),
                    HasSubstr("fans.csv: line 1: none of the columns (name, fan.speed [%]) is a GPU reading"));
    }
    EXPECT_THROW(parse_nvidia_smi_log("a,b,c\n1,2,3\n", "other.csv"), UserError);
    try {
        parse_nvidia_smi_log("timestamp, power.draw [W]\n", "header-only.csv");
        FAIL() << "no rows";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("header-only.csv: nvidia-smi query-csv output without a single GPU reading"));
    }
}

}  // namespace
}  // namespace inferbench::telemetry
