// The cooldown between cells and the idle baseline, with a fake clock and scripted GPU readings: no real
// waiting.
#include "runner/orchestrator/cooldown.hpp"

#include <gtest/gtest.h>

#include <deque>

#include "core/metrics/harness_metrics.hpp"
#include "core/plan/settings.hpp"

namespace inferbench::runner {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

class FakeClock final : public CooldownClock {
public:
    std::int64_t now_ns() override { return now; }
    void sleep_ns(std::int64_t ns) override {
        now += ns;
        slept += ns;
    }
    std::int64_t now = 1000 * kSecond;
    std::int64_t slept = 0;
};

// Each read takes its window on the fake clock and answers the next scripted reading (the last one
// again when the script runs out).
class ScriptedReader final : public GpuWindowReader {
public:
    explicit ScriptedReader(FakeClock& clock, std::deque<std::vector<GpuMeans>> script, bool takes_time = true)
        : clock_(clock), script_(std::move(script)), takes_time_(takes_time) {}
    std::vector<GpuMeans> read(std::int64_t window_ns) override {
        ++reads;
        if (takes_time_) clock_.now += window_ns;
        if (script_.size() > 1) {
            auto next = script_.front();
            script_.pop_front();
            return next;
        }
        return script_.empty() ? std::vector<GpuMeans>{} : script_.front();
    }
    int reads = 0;

private:
    FakeClock& clock_;
    std::deque<std::vector<GpuMeans>> script_;
    bool takes_time_;
};

GpuMeans reading(int gpu, std::optional<double> watts, std::optional<double> celsius) {
    return GpuMeans{gpu, watts, celsius, std::nullopt, 10};
}

const auto never = [] { return false; };

IdleBaseline baseline_of(std::vector<GpuMeans> gpus) {
    IdleBaseline b;
    b.measured_ns = 3 * kSecond;
    b.gpus = std::move(gpus);
    return b;
}

TEST(NearIdle, WithinTheStatedTolerances) {
    const GpuMeans idle = reading(0, 80.0, 35.0);
    EXPECT_TRUE(near_idle(reading(0, 80.0, 35.0), idle));
    EXPECT_TRUE(near_idle(reading(0, 90.0, 38.0), idle)) << "+10 W (the minimum tolerance), +3 °C";
    EXPECT_FALSE(near_idle(reading(0, 90.1, 35.0), idle));
    EXPECT_FALSE(near_idle(reading(0, 80.0, 38.1), idle));
    EXPECT_TRUE(near_idle(reading(0, 220.0, 35.0), reading(0, 200.0, 35.0))) << "10% of a larger idle power";
    EXPECT_FALSE(near_idle(reading(0, 221.0, 35.0), reading(0, 200.0, 35.0)));
    EXPECT_TRUE(near_idle(reading(0, std::nullopt, 36.0), idle)) << "power not read: temperature decides";
    EXPECT_FALSE(near_idle(reading(0, std::nullopt, std::nullopt), idle)) << "nothing read: never near";
    EXPECT_FALSE(near_idle(reading(0, 80.0, 35.0), reading(0, std::nullopt, std::nullopt)));
}

TEST(Cooldown, AFixedTimeSleepsThatLong) {
    FakeClock clock;
    ScriptedReader reader(clock, {});
    const auto result = cool_down({30 * kSecond, 120 * kSecond, 0, nullptr}, reader, clock, never);
    EXPECT_EQ(result.waited_ns, 30 * kSecond);
    EXPECT_EQ(clock.slept, 30 * kSecond);
    EXPECT_FALSE(result.reached_idle);
    EXPECT_EQ(reader.reads, 0) << "a fixed wait reads no GPU";
    EXPECT_EQ(cool_down({0, 120 * kSecond, 0, nullptr}, reader, clock, never).waited_ns, 0);
}

TEST(Cooldown, UntilIdleStopsOnceTheGpuIsBackNearItsBaseline) {
    FakeClock clock;
    const IdleBaseline baseline = baseline_of({reading(0, 80.0, 35.0), reading(1, 60.0, 30.0)});
    // GPU 1 is the cell's: hot for three readings, then near idle (GPU 0 stays hot, and does not matter).
    ScriptedReader reader(clock, {{reading(0, 300.0, 60.0), reading(1, 250.0, 55.0)},
                                  {reading(0, 300.0, 60.0), reading(1, 150.0, 45.0)},
                                  {reading(0, 300.0, 60.0), reading(1, 75.0, 34.0)},
                                  {reading(0, 300.0, 60.0), reading(1, 65.0, 32.0)}});
    const auto result = cool_down({kCooldownUntilIdle, 120 * kSecond, 1, &baseline}, reader, clock, never);
    EXPECT_EQ(result.reached_idle, true);
    EXPECT_EQ(reader.reads, 4);
    EXPECT_EQ(result.waited_ns, 4 * kCooldownWindowNs);
    EXPECT_EQ(result.last->power_w, 65.0);
    const auto metrics = cooldown_metrics(result);
    ASSERT_EQ(metrics.size(), 4u);
    EXPECT_EQ(metrics[0].name, harness_metrics::kCooldownS);
    EXPECT_DOUBLE_EQ(metrics[0].value, 4.0);
    EXPECT_EQ(metrics[1].name, harness_metrics::kCooldownReachedIdle);
    EXPECT_EQ(metrics[1].value, 1.0);
}

TEST(Cooldown, UntilIdleGivesUpAtTheMaximum) {
    FakeClock clock;
    const IdleBaseline baseline = baseline_of({reading(0, 80.0, 35.0)});
    ScriptedReader reader(clock, {{reading(0, 200.0, 50.0)}});
    const auto result = cool_down({kCooldownUntilIdle, 10 * kSecond, 0, &baseline}, reader, clock, never);
    EXPECT_EQ(result.reached_idle, false);
    EXPECT_EQ(result.waited_ns, 10 * kSecond);
    EXPECT_EQ(result.last->temperature_c, 50.0);
    EXPECT_EQ(cooldown_metrics(result)[1].value, 0.0);
}

TEST(Cooldown, WithoutABaselineOrAReadingItWaitsTheMaximumAndNeverHangs) {
    FakeClock clock;
    // A reader that returns at once with nothing: each window still takes its time.
    ScriptedReader blind(clock, {}, false);
    const IdleBaseline baseline = baseline_of({reading(0, 80.0, 35.0)});
    const auto no_reading = cool_down({kCooldownUntilIdle, 5 * kSecond, 0, &baseline}, blind, clock, never);
    EXPECT_EQ(no_reading.reached_idle, false);
    EXPECT_EQ(no_reading.waited_ns, 5 * kSecond);
    EXPECT_FALSE(no_reading.last);
    EXPECT_EQ(cooldown_metrics(no_reading).size(), 2u) << "no last reading to store";

    ScriptedReader cool(clock, {{reading(0, 80.0, 35.0)}});
    const auto no_baseline = cool_down({kCooldownUntilIdle, 5 * kSecond, 0, nullptr}, cool, clock, never);
    EXPECT_EQ(no_baseline.reached_idle, false) << "never known to be near an idle it has no figure of";
    EXPECT_EQ(no_baseline.waited_ns, 5 * kSecond);
}

TEST(Cooldown, AnInterruptEndsTheWait) {
    FakeClock clock;
    ScriptedReader reader(clock, {{reading(0, 200.0, 50.0)}});
    const IdleBaseline baseline = baseline_of({reading(0, 80.0, 35.0)});
    int asked = 0;
    const auto after_two = [&asked] { return ++asked > 2; };
    const auto idle = cool_down({kCooldownUntilIdle, 120 * kSecond, 0, &baseline}, reader, clock, after_two);
    EXPECT_FALSE(idle.reached_idle);
    EXPECT_EQ(reader.reads, 2);
    asked = 0;
    const auto fixed = cool_down({60 * kSecond, 0, 0, nullptr}, reader, clock, after_two);
    EXPECT_LT(fixed.waited_ns, 60 * kSecond);
}

TEST(IdleBaseline, TheMeansOfOneWindowPerGpu) {
    std::vector<GpuSample> samples;
    for (int i = 0; i < 4; ++i) {
        GpuSample g0;
        g0.gpu_index = 0;
        g0.power_w = 70.0 + i;  // 70..73: mean 71.5
        g0.temperature_c = 30.0;
        g0.gpu_util_pct = 0;
        samples.push_back(g0);
        GpuSample g1;
        g1.gpu_index = 1;
        g1.power_avg_w = 50.0;  // no instant power: the 1 s average
        samples.push_back(g1);
        GpuSample g2;  // nothing read
        g2.gpu_index = 2;
        samples.push_back(g2);
    }
    const auto means = window_means(samples);
    ASSERT_EQ(means.size(), 2u);
    EXPECT_EQ(means[0].index, 0);
    EXPECT_DOUBLE_EQ(*means[0].power_w, 71.5);
    EXPECT_EQ(means[0].temperature_c, 30.0);
    EXPECT_EQ(means[0].samples, 4);
    EXPECT_EQ(means[1].power_w, 50.0);
    EXPECT_FALSE(means[1].temperature_c);

    FakeClock clock;
    ScriptedReader reader(clock, {means});
    const auto baseline = measure_idle_baseline(reader, 3 * kSecond);
    EXPECT_EQ(baseline.measured_ns, 3 * kSecond);
    EXPECT_EQ(baseline.gpus, means);
    EXPECT_TRUE(baseline.unavailable.empty());
    ScriptedReader none(clock, {});
    EXPECT_EQ(measure_idle_baseline(none, 3 * kSecond).unavailable,
              "no GPU gave a power or temperature reading in 3s");
}

TEST(IdleBaseline, StoredWithTheRunAndReadBack) {
    IdleBaseline baseline = baseline_of({reading(0, 78.5, 31.0), reading(1, std::nullopt, 33.0)});
    nlohmann::ordered_json environment;
    environment["idle_baseline"] = to_json(baseline);
    const auto back = idle_baseline_of(nlohmann::json::parse(environment.dump()));
    ASSERT_TRUE(back);
    EXPECT_EQ(*back, baseline);
    EXPECT_FALSE(idle_baseline_of(nlohmann::json::parse(R"({"host": "x"})")));
}

}  // namespace
}  // namespace inferbench::runner
