// Telemetry end to end: the real CLI with the fake libnvidia-ml stores GPU and CPU samples of every
// phase and the summary shows power; without NVML or nvidia-smi the benchmark still runs and says why.
#include <cstdlib>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ScratchDir = testing::CliScratch;

class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

const TelemetrySource* find_source(const std::vector<TelemetrySource>& sources, const std::string& name) {
    for (const auto& s : sources)
        if (s.source == name) return &s;
    return nullptr;
}

TEST(Telemetry, FakeNvmlSamplesEveryPhaseAndTheSummaryShowsPower) {
    ScratchDir dir;
    ScopedEnv nvml("INFERBENCH_NVML_LIBRARY", FAKE_NVML);
    // A backend whose inference takes 2 ms: the measured phase lasts its full second on any machine.
    const auto r = dir.run("run --backend fault --model null --batch 1 --duration 1s --warmup 200ms "
                           "--set backend_options.fault.sleep_ms=2 --set telemetry_rate_hz=20 --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::ok);
    const auto gpu = store.gpu_samples(benchmarks[0].benchmark_id);
    std::map<SamplePhase, int> phases;
    for (const auto& s : gpu) ++phases[s.phase];
    EXPECT_GE(phases[SamplePhase::load], 2) << "one round (both GPUs) at the worker's start at least";
    EXPECT_GE(phases[SamplePhase::warmup], 2);
    EXPECT_GE(phases[SamplePhase::measure], 2 * 15) << "1 s at 20 Hz, two GPUs";
    const auto iterations = store.iterations(benchmarks[0].benchmark_id);
    ASSERT_FALSE(iterations.empty());
    for (const auto& s : gpu) {
        const bool inside = s.t_ns >= iterations.front().start_ns &&
                            s.t_ns <= iterations.back().start_ns + iterations.back().e2e_ns;
        EXPECT_EQ(s.phase == SamplePhase::measure, inside) << "measure samples are those within the iterations";
    }
    const auto cpu = store.cpu_samples(benchmarks[0].benchmark_id);
    EXPECT_FALSE(cpu.empty());
    const auto sources = store.telemetry_sources(benchmarks[0].benchmark_id);
    ASSERT_NE(find_source(sources, "nvml"), nullptr);
    EXPECT_EQ(find_source(sources, "nvml")->detail, "2 GPUs, driver 580.65.06");
    const auto env = nlohmann::json::parse(store.runs()[0].environment_json);
    EXPECT_EQ(env.at("gpus").at("source"), "nvml");
    EXPECT_EQ(env["gpus"]["devices"][0]["name"], "Fake H200");

    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto row = nlohmann::json::parse(summary.out).at("rows").at(0);
    EXPECT_DOUBLE_EQ(row.at("power_mean_w").get<double>(), 450.5) << "both GPUs of a cpu benchmark, together";
    EXPECT_GT(row.at("joules_per_inference").get<double>(), 0.0);
    EXPECT_GT(row.at("inferences_per_joule").get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(row.at("sm_clock_mean_mhz").get<double>(), 1980.0);
    EXPECT_DOUBLE_EQ(row.at("temperature_max_c").get<double>(), 41.0);
    EXPECT_DOUBLE_EQ(row.at("fb_peak_mib").get<double>(), 20480.0);
    EXPECT_GE(row.at("cpu_mean_pct").get<double>(), 0.0);
    EXPECT_GT(row.at("rss_peak_mib").get<double>(), 0.0);
}

TEST(Telemetry, WithoutNvmlTheBenchmarkRunsAndTheSourcesSayWhy) {
    ScratchDir dir;
    ScopedEnv nvml("INFERBENCH_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1");
    ScopedEnv path("PATH", dir.path().string() + ":/usr/bin:/bin");
    if (std::system("command -v nvidia-smi >/dev/null 2>&1") == 0) GTEST_SKIP() << "this machine has nvidia-smi";
    const auto r = dir.run("run --backend fault --model null --batch 1 --duration 500ms --warmup 50ms "
                           "--set backend_options.fault.sleep_ms=2 --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto b = store.benchmarks().at(0);
    EXPECT_EQ(b.status, BenchmarkStatus::ok);
    EXPECT_TRUE(store.gpu_samples(b.benchmark_id).empty());
    EXPECT_FALSE(store.cpu_samples(b.benchmark_id).empty());
    const auto sources = store.telemetry_sources(b.benchmark_id);
    ASSERT_NE(find_source(sources, "nvml"), nullptr);
    EXPECT_EQ(find_source(sources, "nvml")->status, "unavailable");
    EXPECT_THAT(find_source(sources, "nvml")->detail, HasSubstr("/nonexistent/libnvidia-ml.so.1"));
    ASSERT_NE(find_source(sources, "nvidia-smi"), nullptr);
    EXPECT_EQ(find_source(sources, "nvidia-smi")->detail, "nvidia-smi not found on PATH");
    EXPECT_EQ(find_source(sources, "procfs")->status, "ok");
    const auto env = nlohmann::json::parse(store.runs()[0].environment_json);
    EXPECT_THAT(env.at("gpus").at("unavailable").get<std::string>(), HasSubstr("nvidia-smi not found on PATH"));
    const auto summary = dir.run("summary --db r.db --json");
    const auto row = nlohmann::json::parse(summary.out).at("rows").at(0);
    // Without a value in any row a column is left out of the JSON.
    for (const char* key : {"power_mean_w", "joules_per_inference"})
        EXPECT_TRUE(!row.contains(key) || row.at(key).is_null()) << key;
    EXPECT_FALSE(row.at("cpu_mean_pct").is_null());
}

TEST(Telemetry, TurnedOffStoresNothing) {
    ScratchDir dir;
    ScopedEnv nvml("INFERBENCH_NVML_LIBRARY", FAKE_NVML);
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\nbatch_sizes: [1]\nduration: 100ms\nwarmup: 0s\n"
                           "telemetry_enabled: false\n");
    const auto r = dir.run("run plan.yaml --db r.db");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto id = store.benchmarks().at(0).benchmark_id;
    EXPECT_TRUE(store.gpu_samples(id).empty());
    EXPECT_TRUE(store.cpu_samples(id).empty());
    EXPECT_TRUE(store.telemetry_sources(id).empty());
}

TEST(Telemetry, BadSettingsGiveOneLineAndExitCodeTwo) {
    ScratchDir dir;
    auto r = dir.run("run --backend null --model null --set telemetry_rate_hz=500 --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: --set telemetry_rate_hz=500: telemetry_rate_hz: '500' is above the maximum 100\n");
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\ntelemetry_gpu: dcgm\n");
    r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: plan.yaml:3:16: telemetry_gpu: unknown value 'dcgm'; valid choices: auto, nvml, "
                     "nvidia-smi, off\n");
    dir.write("plan.yaml", "models: [null]\nbackends: [null]\ntelemetry_enabled: maybe\n");
    r = dir.run("run plan.yaml --db r.db");
    EXPECT_EQ(r.err, "inferbench: error: plan.yaml:3:20: telemetry_enabled: 'maybe' is not true or false\n");
    const auto help = dir.run("run --help");
    EXPECT_THAT(help.out, HasSubstr("telemetry_rate_hz  count      10"));
    EXPECT_THAT(help.out, HasSubstr("telemetry_gpu      choice     auto"));
    EXPECT_THAT(help.out, HasSubstr("telemetry_enabled  bool       true"));
}

}  // namespace
}  // namespace inferbench
