// GPU and CPU samples and telemetry sources: migration step 3, round trips, NULL for what was not read.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/samples.hpp"
#include "store/results_store.hpp"
#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using ::testing::ElementsAre;

using TelemetrySamplesTest = StoreFileTest;

TEST_F(TelemetrySamplesTest, SchemaHasTheTelemetryStep) {
    auto store = ResultsStore::open(db_path_);
    EXPECT_GE(store.schema_version(), 3);
}

TEST_F(TelemetrySamplesTest, GpuSamplesRoundTripWithAbsentMetricsKeptAbsent) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run_id = add_run(store);
    GpuSample full;
    full.t_ns = 1'000;
    full.phase = SamplePhase::warmup;
    full.gpu_index = 1;
    full.power_w = 611.5;
    full.power_avg_w = 600.25;
    full.energy_mj = 123456789.0;
    full.power_limit_w = 700;
    full.temperature_c = 61;
    full.memory_temperature_c = 70;
    full.sm_clock_mhz = 1980;
    full.memory_clock_mhz = 3201;
    full.graphics_clock_mhz = 1980;
    full.gpu_util_pct = 100;
    full.memory_util_pct = 55;
    full.fb_used_mib = 8000;
    full.fb_total_mib = 143771;
    full.pcie_tx_kib_s = 1200;
    full.pcie_rx_kib_s = 3400;
    full.pstate = 0;
    full.clock_event_reasons = clock_event::kSwPowerCap | clock_event::kHwSlowdown;
    full.process_fb_mib = 2048;
    GpuSample sparse;
    sparse.t_ns = 2'000;
    sparse.power_w = 90.0;
    const std::vector<GpuSample> samples = {full, sparse};
    const std::vector<TelemetrySource> sources = {{"procfs", "ok", ""},
                                                  {"nvml", "unavailable", "libnvidia-ml.so.1: not found"}};
    const std::int64_t id = store.add_benchmark(benchmark(run_id), BenchmarkData{.gpu_samples = samples, .telemetry_sources = sources});

    const auto back = store.gpu_samples(id);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].t_ns, 1'000);
    EXPECT_EQ(back[0].phase, SamplePhase::warmup);
    EXPECT_EQ(back[0].gpu_index, 1);
    EXPECT_EQ(back[0].power_w, 611.5);
    EXPECT_EQ(back[0].power_avg_w, 600.25);
    EXPECT_EQ(back[0].energy_mj, 123456789.0);
    EXPECT_EQ(back[0].power_limit_w, 700);
    EXPECT_EQ(back[0].memory_temperature_c, 70);
    EXPECT_EQ(back[0].graphics_clock_mhz, 1980);
    EXPECT_EQ(back[0].pcie_rx_kib_s, 3400);
    EXPECT_EQ(back[0].pstate, 0);
    EXPECT_EQ(back[0].clock_event_reasons, clock_event::kSwPowerCap | clock_event::kHwSlowdown);
    EXPECT_EQ(back[0].process_fb_mib, 2048);
    EXPECT_EQ(back[1].phase, SamplePhase::measure);
    EXPECT_EQ(back[1].power_w, 90.0);
    EXPECT_FALSE(back[1].temperature_c.has_value());
    EXPECT_FALSE(back[1].pstate.has_value());
    EXPECT_FALSE(back[1].clock_event_reasons.has_value());

    const auto back_sources = store.telemetry_sources(id);
    ASSERT_EQ(back_sources.size(), 2u);
    EXPECT_EQ(back_sources[0].source, "nvml");
    EXPECT_EQ(back_sources[0].status, "unavailable");
    EXPECT_EQ(back_sources[0].detail, "libnvidia-ml.so.1: not found");
    EXPECT_EQ(back_sources[1].source, "procfs");
}

TEST_F(TelemetrySamplesTest, CpuSamplesRoundTripWithPerCoreShares) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t run_id = add_run(store);
    CpuSample sample;
    sample.t_ns = 5;
    sample.phase = SamplePhase::load;
    sample.process_cpu_pct = 150;
    sample.process_cpu_pct_per_core = {99.5, 50.5};
    sample.process_rss_mib = 512;
    sample.process_peak_rss_mib = 600;
    sample.host_cpu_pct = 80;
    sample.host_memory_used_mib = 4096;
    sample.host_memory_total_mib = 24576;
    CpuSample bare;
    bare.t_ns = 6;
    const std::vector<CpuSample> samples = {sample, bare};
    const std::int64_t id = store.add_benchmark(benchmark(run_id), BenchmarkData{.cpu_samples = samples});
    const auto back = store.cpu_samples(id);
    ASSERT_EQ(back.size(), 2u);
    EXPECT_EQ(back[0].phase, SamplePhase::load);
    EXPECT_EQ(back[0].process_cpu_pct, 150);
    EXPECT_THAT(back[0].process_cpu_pct_per_core, ElementsAre(99.5, 50.5));
    EXPECT_EQ(back[0].process_peak_rss_mib, 600);
    EXPECT_EQ(back[0].host_memory_total_mib, 24576);
    EXPECT_FALSE(back[0].cpu_package_energy_j.has_value());
    EXPECT_TRUE(back[1].process_cpu_pct_per_core.empty());
    EXPECT_FALSE(back[1].process_cpu_pct.has_value());
    EXPECT_TRUE(store.gpu_samples(id).empty());
}

TEST(ClockEventReasons, DescribesBitsInOrderAndNoneForZero) {
    EXPECT_EQ(clock_event::describe(0), "none");
    EXPECT_EQ(clock_event::describe(clock_event::kHwSlowdown | clock_event::kSwPowerCap), "SW power cap, HW slowdown");
    EXPECT_EQ(clock_event::reasons().size(), 9u);
}

TEST(SamplePhaseNames, RoundTrip) {
    for (const auto phase : {SamplePhase::load, SamplePhase::warmup, SamplePhase::measure, SamplePhase::teardown})
        EXPECT_EQ(sample_phase_from_string(to_string(phase)), phase);
    EXPECT_FALSE(sample_phase_from_string("idle").has_value());
}

}  // namespace
}  // namespace inferbench::store
