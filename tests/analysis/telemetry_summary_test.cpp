// The telemetry summary's arithmetic on hand-made samples, with hand-computed expectations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/telemetry_summary.hpp"

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kSecond = 1'000'000'000;

GpuSample gpu_sample(int gpu, std::int64_t t_s, double power_w, std::optional<double> energy_mj,
                     std::uint64_t reasons = 0, SamplePhase phase = SamplePhase::measure) {
    GpuSample s;
    s.gpu_index = gpu;
    s.t_ns = t_s * kSecond;
    s.phase = phase;
    s.power_w = power_w;
    s.energy_mj = energy_mj;
    s.clock_event_reasons = reasons;
    return s;
}

// One GPU, measured from 0 to 3 s: power 100, 200, 200, 100 W; the counter says 520 J; SW power cap
// during the first two intervals; HW slowdown on the last sample alone (which stands for no time).
std::vector<GpuSample> one_gpu(bool with_counter) {
    const auto mj = [&](double value) { return with_counter ? std::optional<double>(value) : std::nullopt; };
    std::vector<GpuSample> samples = {
        gpu_sample(0, -1, 999, mj(-5), clock_event::kHwThermalSlowdown, SamplePhase::warmup),
        gpu_sample(0, 0, 100, mj(10'000), clock_event::kSwPowerCap),
        gpu_sample(0, 1, 200, mj(160'000), clock_event::kSwPowerCap | clock_event::kGpuIdle),
        gpu_sample(0, 2, 200, mj(380'000), 0),
        gpu_sample(0, 3, 100, mj(530'000), clock_event::kHwSlowdown),
        gpu_sample(0, 4, 999, mj(990'000), clock_event::kHwThermalSlowdown, SamplePhase::teardown),
    };
    const double sm[] = {2000, 1980, 1800, 1500, 1700, 1000};
    const double temp[] = {90, 60, 70, 65, 66, 95};
    for (std::size_t i = 0; i < samples.size(); ++i) {
        samples[i].sm_clock_mhz = sm[i];
        samples[i].temperature_c = temp[i];
        samples[i].fb_used_mib = 1000.0 * static_cast<double>(i);
        samples[i].gpu_util_pct = 90;
    }
    return samples;
}

TEST(TelemetrySummary, EnergyFromTheCounterPerInference) {
    const auto gpu = one_gpu(true);
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1040);
    EXPECT_EQ(t.gpu_samples, 4);
    EXPECT_DOUBLE_EQ(*t.mean_power_w, 150.0);
    EXPECT_DOUBLE_EQ(*t.max_power_w, 200.0);
    EXPECT_DOUBLE_EQ(*t.energy_j, 520.0);
    EXPECT_EQ(t.energy_source, "energy counter");
    EXPECT_DOUBLE_EQ(*t.joules_per_inference, 0.5);
    EXPECT_DOUBLE_EQ(*t.inferences_per_joule, 2.0);
    EXPECT_DOUBLE_EQ(*t.mean_sm_clock_mhz, (1980.0 + 1800 + 1500 + 1700) / 4);
    EXPECT_DOUBLE_EQ(*t.min_sm_clock_mhz, 1500.0);
    EXPECT_DOUBLE_EQ(*t.max_temperature_c, 70.0) << "warm-up and teardown samples are not the measure phase";
    EXPECT_DOUBLE_EQ(*t.peak_fb_used_mib, 4000.0);
    EXPECT_DOUBLE_EQ(*t.mean_gpu_util_pct, 90.0);
}

TEST(TelemetrySummary, ACounterReadLessOftenThanPowerCountsTheInferencesOfItsOwnSpan) {
    // The counter is read at 1 s and 3 s only (samplers read it about once a second): 370 J over 2 of
    // the 3 measured seconds, so 2/3 of the 1200 measured inferences.
    auto gpu = one_gpu(true);
    gpu[1].energy_mj.reset();
    gpu[3].energy_mj.reset();
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1200, 3 * kSecond);
    EXPECT_EQ(t.energy_source, "energy counter");
    EXPECT_DOUBLE_EQ(*t.energy_j, 370.0);
    EXPECT_DOUBLE_EQ(*t.joules_per_inference, 370.0 / 800.0);
}

TEST(TelemetrySummary, TheFirstCounterReadingAfterTheMeasurePhaseClosesIt) {
    // Readings at 0 s (measure) and 4 s (teardown) only: 980 J over the 4 s between them.
    auto gpu = one_gpu(true);
    gpu[2].energy_mj.reset();
    gpu[3].energy_mj.reset();
    gpu[4].energy_mj.reset();
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1000, 3 * kSecond);
    EXPECT_EQ(t.energy_source, "energy counter");
    EXPECT_DOUBLE_EQ(*t.energy_j, 980.0);
    EXPECT_DOUBLE_EQ(*t.joules_per_inference, 0.98);
}

TEST(TelemetrySummary, EnergyIntegratedWithoutACounter) {
    const auto gpu = one_gpu(false);
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1000);
    // Trapezoids: (100+200)/2 + (200+200)/2 + (200+100)/2 = 150 + 200 + 150 J.
    EXPECT_DOUBLE_EQ(*t.energy_j, 500.0);
    EXPECT_EQ(t.energy_source, "integrated power");
    EXPECT_DOUBLE_EQ(*t.joules_per_inference, 0.5);
}

TEST(TelemetrySummary, InferencesOfTheSampledSpanOnly) {
    // The phase lasted 4 s, the samples span 3 s of it: 1040 x 3/4 = 780 inferences for the 520 J.
    const auto gpu = one_gpu(true);
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1040, 4 * kSecond);
    EXPECT_DOUBLE_EQ(*t.joules_per_inference, 520.0 / 780.0);
    EXPECT_DOUBLE_EQ(*t.inferences_per_joule, 780.0 / 520.0);
}

TEST(TelemetrySummary, ThrottleSharesOfThrottlingReasonsOnly) {
    const auto gpu = one_gpu(true);
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1);
    // SW power cap on the samples at 0 s and 1 s, each standing for 1 s of the 3 s; GPU idle does not
    // throttle; HW slowdown only on the last sample, which stands for no time.
    ASSERT_EQ(t.throttled.size(), 1u);
    EXPECT_EQ(t.throttled[0].reason, "sw_power_cap");
    EXPECT_DOUBLE_EQ(t.throttled[0].share, 2.0 / 3.0);
}

TEST(TelemetrySummary, TwoGpusTogether) {
    std::vector<GpuSample> gpu = {
        gpu_sample(0, 0, 100, 0), gpu_sample(1, 0, 50, std::nullopt, clock_event::kHwSlowdown),
        gpu_sample(0, 1, 300, 200'000), gpu_sample(1, 1, 70, std::nullopt),
        gpu_sample(0, 2, 100, 400'000), gpu_sample(1, 2, 60, std::nullopt),
    };
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 100);
    EXPECT_DOUBLE_EQ(*t.mean_power_w, 500.0 / 3 + 60.0);
    EXPECT_DOUBLE_EQ(*t.max_power_w, 370.0);
    // GPU 1 has no counter: both integrated. GPU 0: 200 + 200 J; GPU 1: 60 + 65 J.
    EXPECT_EQ(t.energy_source, "integrated power");
    EXPECT_DOUBLE_EQ(*t.energy_j, 525.0);
    ASSERT_EQ(t.throttled.size(), 1u);
    EXPECT_EQ(t.throttled[0].reason, "hw_slowdown");
    EXPECT_DOUBLE_EQ(t.throttled[0].share, 0.5) << "GPU 1, 1 s of its 2 s";
}

TEST(TelemetrySummary, NothingMeasuredIsAbsentNotZero) {
    std::vector<GpuSample> gpu = {gpu_sample(0, 0, 100, 5.0)};
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 10);
    EXPECT_DOUBLE_EQ(*t.mean_power_w, 100.0);
    EXPECT_FALSE(t.energy_j.has_value()) << "one sample spans no time";
    EXPECT_FALSE(t.joules_per_inference.has_value());
    EXPECT_EQ(t.energy_source, "");
    const TelemetrySummary empty = summarize_telemetry({}, {}, {}, 10);
    EXPECT_EQ(empty.gpu_samples, 0);
    EXPECT_FALSE(empty.mean_power_w.has_value());
    EXPECT_FALSE(empty.mean_process_cpu_pct.has_value());
    EXPECT_TRUE(empty.throttled.empty());
}

TEST(TelemetrySummary, CpuOfTheMeasurePhase) {
    std::vector<CpuSample> cpu(4);
    const double pct[] = {400, 50, 150, 900};
    const double peak[] = {10, 300, 350, 999};
    const SamplePhase phase[] = {SamplePhase::load, SamplePhase::measure, SamplePhase::measure, SamplePhase::teardown};
    for (std::size_t i = 0; i < cpu.size(); ++i) {
        cpu[i].process_cpu_pct = pct[i];
        cpu[i].process_peak_rss_mib = peak[i];
        cpu[i].phase = phase[i];
    }
    const std::vector<TelemetrySource> sources = {{"procfs", "ok", ""}, {"nvml", "unavailable", "no driver"}};
    const TelemetrySummary t = summarize_telemetry({}, cpu, sources, 10);
    EXPECT_EQ(t.cpu_samples, 2);
    EXPECT_DOUBLE_EQ(*t.mean_process_cpu_pct, 100.0);
    EXPECT_DOUBLE_EQ(*t.peak_rss_mib, 350.0);
    ASSERT_EQ(t.sources.size(), 2u);
    EXPECT_EQ(t.sources[1].detail, "no driver");
}

TEST(TelemetryWarnings, ThrottlingAndAFallingClock) {
    const auto gpu = one_gpu(true);
    const TelemetrySummary t = summarize_telemetry(gpu, {}, {}, 1);
    const auto warnings = telemetry_warnings(t, gpu);
    ASSERT_EQ(warnings.size(), 2u);
    EXPECT_EQ(warnings[0], "GPU throttled for 67% of the measured time (SW power cap 67%): clocks were lowered");
    EXPECT_EQ(warnings[1], "SM clock fell to 1500 MHz while measuring, 25% below the 2000 MHz seen in this benchmark");
    TelemetrySummary steady;
    steady.min_sm_clock_mhz = 1900;
    steady.throttled = {{"sw_power_cap", 0.05}};
    std::vector<GpuSample> fast = {gpu_sample(0, 0, 100, std::nullopt)};
    fast[0].sm_clock_mhz = 2000;
    EXPECT_TRUE(telemetry_warnings(steady, fast).empty()) << "5% throttled and 5% below the top: no warning";
}

// An idle GPU lowers its clock by design: 345 MHz with the GPU-idle reason set, or with 0% utilization,
// is not a clock that fell while measuring.
TEST(TelemetryWarnings, AnIdleGpusLowClockIsNotAFall) {
    std::vector<GpuSample> gpu;
    for (int i = 0; i < 5; ++i) {
        gpu.push_back(gpu_sample(0, i, i < 3 ? 80 : 690, std::nullopt, i < 3 ? clock_event::kGpuIdle : 0));
        gpu.back().sm_clock_mhz = i < 3 ? 345 : 1515;
        gpu.back().gpu_util_pct = i < 3 ? 0 : 100;
    }
    EXPECT_TRUE(telemetry_warnings(summarize_telemetry(gpu, {}, {}, 1), gpu).empty());
    for (auto& s : gpu) s.clock_event_reasons = 0;  // utilization 0 alone says idle too
    EXPECT_TRUE(telemetry_warnings(summarize_telemetry(gpu, {}, {}, 1), gpu).empty());
    gpu[1].gpu_util_pct = 100;  // busy at 345 MHz: that is a fall
    const auto warnings = telemetry_warnings(summarize_telemetry(gpu, {}, {}, 1), gpu);
    ASSERT_EQ(warnings.size(), 1u);
    EXPECT_EQ(warnings[0], "SM clock fell to 345 MHz while measuring, 77% below the 1515 MHz seen in this benchmark");
}

TEST(BenchmarkGpuSamples, TheDevicesGpuElseAll) {
    const std::vector<GpuSample> gpu = {gpu_sample(0, 0, 100, std::nullopt), gpu_sample(1, 0, 50, std::nullopt)};
    ASSERT_EQ(benchmark_gpu_samples(gpu, "cuda:1").size(), 1u);
    EXPECT_EQ(benchmark_gpu_samples(gpu, "cuda:1")[0].gpu_index, 1);
    EXPECT_EQ(benchmark_gpu_samples(gpu, "cuda")[0].gpu_index, 0);
    EXPECT_EQ(benchmark_gpu_samples(gpu, "cuda:5").size(), 2u) << "GPU 5 not sampled: all of them";
    EXPECT_EQ(benchmark_gpu_samples(gpu, "cpu").size(), 2u);
}

}  // namespace
}  // namespace inferbench::analysis
