// The external backend against a fake runner (fake_runner.py, no framework): a clean run, the
// runner's own output, errors, crashes, hangs stopped by a stop request, and protocol violations.
#include "backends/external/external_backend.hpp"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/metrics/harness_metrics.hpp"

namespace inferbench::external {
namespace {

constexpr std::int64_t kShortGraceNs = 300'000'000;

class VectorSink final : public IterationSink {
public:
    explicit VectorSink(std::size_t capacity, std::size_t stop_after = 0)
        : capacity_(capacity), stop_after_(stop_after) {}
    bool add(const IterationRecord& record) override {
        if (records.size() >= capacity_) return false;
        records.push_back(record);
        return records.size() < capacity_;
    }
    bool stop_requested() const override { return stop_after_ > 0 && records.size() >= stop_after_; }

    std::vector<IterationRecord> records;

private:
    std::size_t capacity_;
    std::size_t stop_after_;
};

BenchmarkSpec fake_spec(const std::string& scenario) {
    BenchmarkSpec spec;
    spec.model = "mobilenet";
    spec.backend = "external";
    spec.loop = {.warmup_ns = 0, .warmup_iterations = 0, .duration_ns = 0, .min_iterations = 4, .max_iterations = 100};
    spec.seed = 7;
    spec.backend_options = {{"command", "'" INFERBENCH_TEST_PYTHON "' '" INFERBENCH_FAKE_RUNNER "' " + scenario}};
    return spec;
}

ExternalBackend make_generic() { return ExternalBackend(find_variant("external"), {5'000'000'000, kShortGraceNs}); }

// Runs a scenario to its end; returns the exception message, empty when it succeeded.
std::string run_scenario(const std::string& scenario, VectorSink& sink) {
    auto backend = make_generic();
    const auto spec = fake_spec(scenario);
    try {
        backend.load(spec.model, spec);
        backend.run_own_loop({0, 0, 0, 1, 100}, sink);
    } catch (const EnvironmentError& e) {
        return e.what();
    }
    return {};
}

TEST(ExternalBackend, HeaderIterationsAndDoneReachTheSink) {
    auto backend = make_generic();
    const auto spec = fake_spec("ok");
    EXPECT_EQ(backend.version(), "unknown") << "the generic backend knows its runner only from the cell's options";
    const std::int64_t before = monotonic_ns();
    backend.load(spec.model, spec);
    EXPECT_EQ(backend.version(), "1.0");
    EXPECT_TRUE(backend.capabilities().runs_own_loop);
    EXPECT_TRUE(backend.inputs().empty());
    VectorSink sink(100);
    backend.run_own_loop({0, 0, 0, 4, 100}, sink);
    ASSERT_EQ(sink.records.size(), 4u) << "min_iterations of the request";
    EXPECT_GE(sink.records[0].start_ns, before) << "the runner's clock is ours";
    EXPECT_LE(sink.records[3].start_ns, monotonic_ns());
    EXPECT_EQ(sink.records[0].compute_ns, 700);
    EXPECT_EQ(sink.records[0].h2d_ns, kNotMeasured);
    EXPECT_EQ(sink.records[3].e2e_ns, 1003);
    EXPECT_THROW(
        [&] {
            DeviceTimes times;
            backend.infer(times);
        }(),
        std::logic_error);
}

TEST(ExternalBackend, ReportedPreAndPostProcessingBecomeItsMeasuredMetrics) {
    auto backend = make_generic();
    EXPECT_TRUE(backend.measured_metrics().empty());
    const auto spec = fake_spec("stages");
    backend.load(spec.model, spec);
    VectorSink sink(100);
    backend.run_own_loop({0, 0, 0, 4, 100}, sink);
    ASSERT_EQ(sink.records.size(), 4u);
    const auto metrics = backend.measured_metrics();
    ASSERT_EQ(metrics.size(), 4u);
    EXPECT_EQ(metrics[0].value, 4);
    EXPECT_EQ(metrics[2].name, "host_stage_pre_mean_ns");
    EXPECT_EQ(metrics[2].value, 300'000);
    EXPECT_EQ(metrics[3].value, 100'000);
    // A runner that reports no stages stores none.
    const auto plain = fake_spec("ok");
    backend.load(plain.model, plain);
    VectorSink ok(100);
    backend.run_own_loop({0, 0, 0, 4, 100}, ok);
    EXPECT_TRUE(backend.measured_metrics().empty());
}

TEST(ExternalBackend, TheRunnerThatSaysItFedThePlansInputsHasThemStored) {
    auto backend = make_generic();
    auto spec = fake_spec("inputs");
    spec.inputs = "/data/set";
    backend.load(spec.model, spec);
    const auto metrics = backend.prepared_metrics();
    ASSERT_EQ(metrics.size(), 2u);
    EXPECT_EQ(metrics[0].name, harness_metrics::kInputSamples);
    EXPECT_EQ(metrics[0].value, 3.0);
    EXPECT_EQ(metrics[1].name, harness_metrics::kInputsCycled);
    EXPECT_EQ(metrics[1].value, 1.0);
    VectorSink sink(100);
    backend.run_own_loop({0, 0, 0, 4, 100}, sink);
    EXPECT_EQ(sink.records.size(), 4u);
    // Without inputs in the plan: nothing said, nothing stored.
    const auto plain = fake_spec("inputs");
    backend.load(plain.model, plain);
    EXPECT_TRUE(backend.prepared_metrics().empty());
}

TEST(ExternalBackend, ARunnerThatDoesNotSayItFedThePlansInputsFailsTheCell) {
    auto backend = make_generic();
    auto spec = fake_spec("ok");
    spec.inputs = "/data/set";
    EXPECT_THAT([&] { backend.load(spec.model, spec); },
                ::testing::ThrowsMessage<EnvironmentError>(
                    "the external runner did not say that it fed the plan's inputs (/data/set): its header has no "
                    "\"inputs\", so it ran on inputs of its own; leave inputs unset for it, or make it read the "
                    "request's \"inputs\" (docs/external-runner-protocol.md)"));
}

TEST(ExternalBackend, TheTensorflowRunnerWhichMakesItsOwnInputsRefusesThePlans) {
    const ExternalBackend backend(find_variant("tensorflow-python"), {5'000'000'000, kShortGraceNs});
    BenchmarkSpec spec;
    spec.model = "frozen.pb";
    spec.backend = "tensorflow-python";
    spec.inputs = "/data/set";
    EXPECT_EQ(backend.unsupported_reason(spec),
              "the tensorflow-python runner makes inputs of its own and cannot read the plan's inputs; leave inputs "
              "unset for it");
}

TEST(ExternalBackend, TextLinesAreTheRunnersOwnOutput) {
    VectorSink sink(100);
    EXPECT_EQ(run_scenario("text", sink), "");
    EXPECT_EQ(sink.records.size(), 4u);
}

TEST(ExternalBackend, ErrorLineExitCodeAndStderrMakeTheMessage) {
    VectorSink sink(100);
    EXPECT_EQ(run_scenario("error", sink),
              "external runner failed: fake runner: model not found (exit code 1 before it was ready); last stderr: "
              "Traceback (most recent call last): |   File \"model.py\", line 1 | OSError: boom");
}

TEST(ExternalBackend, CrashKeepsTheIterationsReceived) {
    VectorSink sink(100);
    EXPECT_EQ(run_scenario("crash", sink),
              "external runner failed (killed by signal 11 (SEGV) after 3 measured iterations); last stderr: "
              "fake runner: crashing now");
    EXPECT_EQ(sink.records.size(), 3u);
}

TEST(ExternalBackend, StopRequestEndsAHangingRunnerWithWhatItMeasured) {
    VectorSink sink(100, /*stop_after=*/5);
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_EQ(run_scenario("hang", sink), "") << "SIGTERM, then the runner reports and exits 0";
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
    EXPECT_EQ(sink.records.size(), 5u);
}

TEST(ExternalBackend, RunnerIgnoringSigtermIsKilledAfterTheGraceTime) {
    VectorSink sink(100, /*stop_after=*/5);
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_EQ(run_scenario("ignore_term", sink), "");
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5));
    EXPECT_EQ(sink.records.size(), 5u);
}

TEST(ExternalBackend, MoreIterationsThanTheSinkHoldsStopsTheRunner) {
    VectorSink sink(10);
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_EQ(run_scenario("flood", sink), "");
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(5)) << "stopped, not waited out";
    EXPECT_EQ(sink.records.size(), 10u);
}

TEST(ExternalBackend, ProtocolViolationsFailWithTheLine) {
    VectorSink sink(100);
    EXPECT_EQ(run_scenario("malformed", sink),
              "external runner broke the protocol: start_ns must be a whole number of nanoseconds >= 0, not "
              "\"soon\"; line: {\"type\": \"iteration\", \"start_ns\": \"soon\", \"e2e_ns\": 5}");
    EXPECT_EQ(run_scenario("bad_json", sink),
              "external runner broke the protocol: a line starting with '{' is not valid JSON; line: "
              "{\"type\": \"iteration\", ");
    EXPECT_NE(run_scenario("wall_clock", sink).find("start_ns is not on CLOCK_MONOTONIC"), std::string::npos);
    EXPECT_EQ(run_scenario("truncated", sink),
              "external runner broke the protocol: it exited without a done line after 2 iterations");
    EXPECT_EQ(run_scenario("miscount", sink),
              "external runner broke the protocol: its done line counts 5 iterations, it sent 2");
}

TEST(ExternalBackend, DescribeAnswersWhichCellsRun) {
    const auto backend = make_generic();
    auto spec = fake_spec("ok");
    EXPECT_EQ(backend.unsupported_reason(spec), std::nullopt);
    spec.precision = Precision::fp16;
    EXPECT_EQ(backend.unsupported_reason(spec), "the fake runner has no fp16");
    spec.precision = Precision::bf16;
    EXPECT_EQ(backend.unsupported_reason(spec), "bf16 with fake needs a model file in one of: pt");
    spec.precision = Precision::fp32;
    spec.device = {DeviceKind::cuda, 0};
    EXPECT_EQ(backend.unsupported_reason(spec), "fake 1.0 has no cuda device here");
    spec.backend_options.clear();
    EXPECT_EQ(backend.unsupported_reason(spec),
              "backend external needs backend_options.external.command: the runner's command line "
              "(docs/external-runner-protocol.md)");
    spec.backend_options = {{"command", "/nonexistent/runner"}};
    const auto not_started = backend.unsupported_reason(spec).value_or("");
    EXPECT_EQ(not_started.rfind("external runner --describe failed: exit code 127; last stderr: ", 0), 0u)
        << not_started;
    EXPECT_NE(not_started.find("/nonexistent/runner: not found"), std::string::npos) << "the shell's words";
}

// The Python-runner variants, with the fake in place of the real runner script.
class PythonVariant : public ::testing::Test {
protected:
    void SetUp() override {
        std::filesystem::copy_file(INFERBENCH_FAKE_RUNNER, dir_.path() / "torch_runner.py");
        setenv("INFERBENCH_RUNNER_DIR", dir_.path().c_str(), 1);
    }
    void TearDown() override {
        unsetenv("INFERBENCH_RUNNER_DIR");
        unsetenv("FAKE_RUNNER_REQUIRE_EXE");
    }
    testing::ScratchDir dir_;
};

TEST_F(PythonVariant, AnInterpreterWithoutTheFrameworkGivesTheReasonToSkip) {
    const ExternalBackend backend(find_variant("torch-eager"));
    BenchmarkSpec spec = fake_spec("ok");
    spec.backend_options = {{"python", "/nonexistent/python3"}};
    EXPECT_EQ(backend.unsupported_reason(spec),
              "PyTorch not importable by /nonexistent/python3; install python3-torch or set "
              "backend_options.torch-eager.python");
    spec.backend_options = {{"python", "/nonexistent/python3"}, {"cuda_graph", "true"}};
    EXPECT_EQ(backend.unsupported_reason(spec), "option cuda_graph=true needs a cuda device");
}

TEST_F(PythonVariant, TheFirstInterpreterThatImportsTheFrameworkRuns) {
    // Any interpreter but this one reports the framework missing (exit 3), as python3 without torch does.
    setenv("FAKE_RUNNER_REQUIRE_EXE", INFERBENCH_TEST_PYTHON, 1);
    ExternalBackend backend(find_variant("torch-eager"));
    BenchmarkSpec spec = fake_spec("ok");
    spec.backend_options.clear();
    EXPECT_EQ(backend.unsupported_reason(spec), std::nullopt);
    EXPECT_EQ(backend.version(), "1.0");
    backend.load(spec.model, spec);
    VectorSink sink(100);
    backend.run_own_loop({0, 0, 0, 4, 100}, sink);
    EXPECT_EQ(sink.records.size(), 4u);
}

TEST_F(PythonVariant, AMissingRunnerScriptSaysWhereItWasLookedFor) {
    std::filesystem::remove(dir_.path() / "torch_runner.py");
    const ExternalBackend backend(find_variant("torch-eager"));
    const auto reason = backend.unsupported_reason(fake_spec("ok"));
    ASSERT_TRUE(reason.has_value());
    EXPECT_EQ(reason->rfind("runner torch_runner.py not found in " + dir_.path().string(), 0), 0u) << *reason;
}

}  // namespace
}  // namespace inferbench::external
