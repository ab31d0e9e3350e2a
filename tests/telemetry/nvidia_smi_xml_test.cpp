// nvidia-smi -q -x on the real file in shared/fixtures/nvidia-smi (an idle H200), and the same
// document concatenated, cut short, or in an older driver's element names.
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

TEST(NvidiaSmiXml, IdleDocumentEveryField) {
    const auto log = parse_nvidia_smi_log(smi_fixture("h200-idle-q.xml"), "h200-idle-q.xml");
    EXPECT_EQ(log.format, "q-xml");
    EXPECT_TRUE(log.warnings.empty());
    EXPECT_EQ(log.driver_version, "580.159.04");
    EXPECT_EQ(log.cuda_version, "13.0");
    EXPECT_THAT(log.gpu_names, ElementsAre("NVIDIA H200"));
    EXPECT_EQ(log.first_unix_ms, 1796003542000);  // <timestamp>Mon Nov 30 01:52:22 2026</timestamp>
    ASSERT_EQ(log.samples.size(), 1u);
    const GpuSample& s = log.samples[0];
    EXPECT_EQ(s.t_ns, 0);
    EXPECT_EQ(s.gpu_index, 0);
    EXPECT_EQ(s.power_w, 79.24);        // gpu_power_readings/instant_power_draw
    EXPECT_EQ(s.power_avg_w, 102.40);   // not gpu_memory_power_readings' 53.34
    EXPECT_EQ(s.power_limit_w, 700.0);  // current_power_limit
    EXPECT_EQ(s.temperature_c, 34.0);
    EXPECT_EQ(s.memory_temperature_c, 34.0);
    EXPECT_EQ(s.sm_clock_mhz, 480.0);
    EXPECT_EQ(s.memory_clock_mhz, 3201.0);  // clocks, not applications_clocks / max_clocks
    EXPECT_EQ(s.graphics_clock_mhz, 480.0);
    EXPECT_EQ(s.gpu_util_pct, 0.0);
    EXPECT_EQ(s.memory_util_pct, 0.0);
    EXPECT_EQ(s.fb_used_mib, 0.0);
    EXPECT_EQ(s.fb_total_mib, 143771.0);
    EXPECT_EQ(s.pcie_tx_kib_s, 1028.0);
    EXPECT_EQ(s.pcie_rx_kib_s, 558.0);
    EXPECT_EQ(s.pstate, 0);
    EXPECT_EQ(s.clock_event_reasons, clock_event::kGpuIdle);
    EXPECT_EQ(*s.clock_event_reasons & clock_event::kSwPowerCap, 0u);
    EXPECT_FALSE(s.energy_mj);
}

TEST(NvidiaSmiXml, ConcatenatedDocumentsAreOneSampleEach) {
    const std::string doc = smi_fixture("h200-idle-q.xml");
    std::string later = doc;
    later.replace(later.find("01:52:22"), 8, "01:52:25");
    later.replace(later.find("<instant_power_draw>79.24 W"), 27, "<instant_power_draw>85.50 W");
    const auto log = parse_nvidia_smi_log(doc + later, "two.xml");
    ASSERT_EQ(log.samples.size(), 2u);
    EXPECT_EQ(log.samples[1].t_ns, 3'000'000'000);
    EXPECT_EQ(log.samples[1].power_w, 85.5);
    EXPECT_TRUE(log.warnings.empty());
}

TEST(NvidiaSmiXml, NotAvailableAndEntities) {
    std::string doc = smi_fixture("h200-idle-q.xml");
    doc.replace(doc.find("<gpu_temp>34 C</gpu_temp>"), 25, "<gpu_temp>N/A</gpu_temp>");
    doc.replace(doc.find("<product_name>NVIDIA H200</product_name>"), 40,
                "<product_name>NVIDIA H200 &amp; friends &#x41;</product_name><!-- a comment <gpu> -->");
    const auto log = parse_nvidia_smi_log(doc, "na.xml");
    ASSERT_EQ(log.samples.size(), 1u);
    EXPECT_FALSE(log.samples[0].temperature_c);
    EXPECT_EQ(log.samples[0].memory_temperature_c, 34.0);
    EXPECT_THAT(log.gpu_names, ElementsAre("NVIDIA H200 & friends A"));
}

TEST(NvidiaSmiXml, OlderDriverElementNames) {
    const auto log = parse_nvidia_smi_log(R"(<?xml version="1.0" ?>
<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v11.dtd">
<nvidia_smi_log>
	<timestamp>Tue Mar  5 09:04:11 2024</timestamp>
	<driver_version>470.182.03</driver_version>
	<gpu id="00000000:3B:00.0">
		<product_name>Tesla V100-PCIE-32GB</product_name>
		<performance_state>P2</performance_state>
		<clocks_throttle_reasons>
			<clocks_throttle_reason_gpu_idle>Not Active</clocks_throttle_reason_gpu_idle>
			<clocks_throttle_reason_sw_power_cap>Active</clocks_throttle_reason_sw_power_cap>
			<clocks_throttle_reason_display_clocks_setting>Active</clocks_throttle_reason_display_clocks_setting>
		</clocks_throttle_reasons>
		<power_readings>
			<power_draw>249.85 W</power_draw>
			<power_limit>250.00 W</power_limit>
			<enforced_power_limit>225.00 W</enforced_power_limit>
		</power_readings>
		<empty_element/>
	</gpu>
</nvidia_smi_log>
)",
                                          "v100.xml");
    ASSERT_EQ(log.samples.size(), 1u);
    EXPECT_EQ(log.driver_version, "470.182.03");
    EXPECT_EQ(log.samples[0].power_w, 249.85);
    EXPECT_EQ(log.samples[0].power_limit_w, 225.0);
    EXPECT_EQ(log.samples[0].pstate, 2);
    EXPECT_EQ(log.samples[0].clock_event_reasons, clock_event::kSwPowerCap | clock_event::kDisplayClockSetting);
}

TEST(NvidiaSmiXml, CutShortDocuments) {
    const std::string doc = smi_fixture("h200-idle-q.xml");
    const std::string cut = doc.substr(0, doc.find("<utilization>"));
    try {
        parse_nvidia_smi_log(cut, "cut.xml");
        FAIL();
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("cut.xml: line 145: the XML ends inside <gpu> opened at line 8"));
        EXPECT_THAT(e.what(), HasSubstr("not a complete nvidia-smi -q -x document (cut short?)"));
    }
    // One whole document before the cut: kept, with a warning.
    const auto log = parse_nvidia_smi_log(doc + cut, "one-and-a-half.xml");
    ASSERT_EQ(log.samples.size(), 1u);
    ASSERT_EQ(log.warnings.size(), 1u);
    EXPECT_THAT(log.warnings[0], HasSubstr("the XML ends inside"));
    EXPECT_THAT(log.warnings[0], HasSubstr("the rest of the file is not read (cut short?)"));
    try {
        parse_nvidia_smi_log("<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n<gpu>\n</pgu>\n</nvidia_smi_log>\n",
                             "bad.xml");
        FAIL();
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("bad.xml: line 4: </pgu> closes <gpu> opened at line 3"));
    }
    EXPECT_THROW(parse_nvidia_smi_log("<?xml version=\"1.0\" ?>\n<html></html>\n", "page.xml"), UserError);
}

}  // namespace
}  // namespace inferbench::telemetry
