// The client of runners/torch_export.py: its command line, every answer of the contract (exit 0 with its
// JSON line, 1, 2, 3, a signal, the time limit, a line that breaks the contract), and whole runs of a fake
// exporter that obeys the contract (fakes/torch_export): the cache, the interpreters tried in turn, the
// traceback kept in our stderr.
#include "backends/external/torch_exporter.hpp"

#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"

namespace inferbench::external {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

ExportRequest resnet_request(const std::string& cache_dir = "/tmp/cache") {
    ExportRequest request;
    request.spec = "torchvision:resnet50";
    request.precision = Precision::fp16;
    request.batch = 8;
    request.device = Device{DeviceKind::cuda, 0};
    request.cache_dir = cache_dir;
    return request;
}

ExportRun exited(int code, std::vector<std::string> stdout_lines, std::string stderr_tail = "") {
    ExportRun run;
    run.status.exited = true;
    run.status.code = code;
    run.wall_seconds = 2.5;
    run.stdout_lines = std::move(stdout_lines);
    run.stderr_tail = std::move(stderr_tail);
    return run;
}

const std::string kSuccess =
    R"({"path": "/c/m.pt2", "cache_hit": false, "seconds": 41.2, "torch_version": "2.11.0+cu130", "key": {},)"
    R"( "inputs": [{"name": "x", "dtype": "float16", "shape": [8, 3, 224, 224]},)"
    R"( {"name": "mask", "dtype": "int64", "shape": [null, "seq"]}]})";

// The message of what read_export_outcome throws, prefixed with the exception's kind.
std::string thrown(const ExportRun& run, std::int64_t timeout_ns = 0) {
    try {
        read_export_outcome(run, resnet_request(), timeout_ns);
    } catch (const UserError& e) {
        return std::string("UserError: ") + e.what();
    } catch (const EnvironmentError& e) {
        return std::string("EnvironmentError: ") + e.what();
    }
    return "(no error)";
}

TEST(TorchExporter, ArgumentsFollowTheContract) {
    ExportRequest request = resnet_request();
    request.format = ExportFormat::onnx;
    request.batch.reset();
    request.device = Device{};
    request.seq_len = 128;
    request.options = {"opset=17"};
    EXPECT_THAT(export_arguments(request),
                ElementsAre("--spec", "torchvision:resnet50", "--format", "onnx", "--precision", "fp16", "--batch",
                            "dynamic", "--device", "cpu", "--cache-dir", "/tmp/cache", "--seq-len", "128", "--option",
                            "opset=17"));
    EXPECT_EQ(to_string(ExportFormat::torchscript), "torchscript");
}

TEST(TorchExporter, ASuccessLineGivesTheFileAndItsInputs) {
    const ExportOutcome outcome =
        read_export_outcome(exited(0, {"compiling...", kSuccess, "  "}), resnet_request(), 0);
    ASSERT_TRUE(outcome.model);
    const ExportedModel& model = *outcome.model;
    EXPECT_EQ(model.path, "/c/m.pt2");
    EXPECT_FALSE(model.cache_hit);
    EXPECT_DOUBLE_EQ(model.seconds, 41.2);
    EXPECT_EQ(model.torch_version, "2.11.0+cu130");
    ASSERT_EQ(model.inputs.size(), 2u);
    EXPECT_EQ(model.inputs[0].dtype, DType::f16);
    EXPECT_THAT(model.inputs[0].shape, ElementsAre(8, 3, 224, 224));
    EXPECT_EQ(model.inputs[1].name, "mask");
    EXPECT_THAT(model.inputs[1].shape, ElementsAre(-1, -1)) << "null and a symbol are dynamic";
}

TEST(TorchExporter, ASuccessLineThatBreaksTheContractSaysWhich) {
    EXPECT_THAT(thrown(exited(0, {"done"})),
                AllOf(StartsWith("EnvironmentError: torch_export.py broke its contract"), HasSubstr("'done'")));
    EXPECT_THAT(thrown(exited(0, {R"({"path": "m.pt2", "cache_hit": true, "seconds": 0, "torch_version": "2", "inputs": []})"})),
                HasSubstr("not an absolute path"));
    EXPECT_THAT(thrown(exited(0, {R"({"path": "/m.pt2", "cache_hit": "no", "seconds": 0, "torch_version": "2", "inputs": []})"})),
                HasSubstr("'cache_hit' is \"no\""));
    EXPECT_THAT(thrown(exited(0, {R"({"path": "/m.pt2", "cache_hit": true, "torch_version": "2", "inputs": []})"})),
                HasSubstr("has no 'seconds'"));
    EXPECT_THAT(thrown(exited(0, {R"({"path": "/m.pt2", "cache_hit": true, "seconds": 0, "torch_version": "2",)"
                                  R"( "inputs": [{"name": "x", "dtype": "complex64", "shape": [1]}]})"})),
                HasSubstr("dtype 'complex64'"));
}

TEST(TorchExporter, ExitThreeIsAReasonToSkip) {
    const ExportOutcome outcome = read_export_outcome(
        exited(3, {R"({"error": "PyTorch 1.13.0 has no aoti_compile_and_package", "traceback_tail": []})"}),
        resnet_request(), 0);
    EXPECT_FALSE(outcome.model);
    EXPECT_EQ(outcome.skip_reason, "PyTorch 1.13.0 has no aoti_compile_and_package");
}

TEST(TorchExporter, BadInputAndFailuresAreTheExportersOwnLine) {
    EXPECT_EQ(thrown(exited(2, {R"({"error": "unknown library 'tv' in spec 'tv:resnet50'", "traceback_tail": ["x"]})"})),
              "UserError: unknown library 'tv' in spec 'tv:resnet50'");
    EXPECT_EQ(thrown(exited(1, {R"({"error": "the factory raised: out of memory", "traceback_tail": []})"})),
              "EnvironmentError: the factory raised: out of memory");
    EXPECT_EQ(thrown(exited(1, {}, "Traceback | ImportError: libcudart.so.13")),
              "EnvironmentError: torch_export.py gave no error line; its last output: Traceback | ImportError: "
              "libcudart.so.13");
    EXPECT_THAT(thrown(exited(5, {}, "Illegal instruction")),
                AllOf(HasSubstr("ended with exit code 5 while exporting torchvision:resnet50 to pt2 (fp16, batch 8, "
                                "cuda:0)"),
                      HasSubstr("Illegal instruction")));
}

TEST(TorchExporter, AKillAndATimeoutSayWhatHappened) {
    ExportRun killed = exited(0, {});
    killed.status = ExitStatus{false, -1, SIGKILL};
    EXPECT_THAT(thrown(killed), AllOf(HasSubstr("killed by signal 9 (KILL) after 2.5 s"),
                                      HasSubstr("out-of-memory killer"), HasSubstr("smaller batch")));
    ExportRun crashed = exited(0, {}, "Fatal Python error");
    crashed.status = ExitStatus{false, -1, SIGSEGV};
    EXPECT_THAT(thrown(crashed), AllOf(HasSubstr("signal 11 (SEGV)"), HasSubstr("Fatal Python error")));
    ExportRun slow = killed;
    slow.timed_out = true;
    EXPECT_THAT(thrown(slow, 540'000'000'000),
                AllOf(HasSubstr("did not finish exporting torchvision:resnet50 to pt2"), HasSubstr("within 9m"),
                      HasSubstr("raise the plan's timeout")));
}

TEST(TorchExporter, TheTracebackTailComesWithTheFailureLine) {
    EXPECT_THAT(export_traceback_tail({R"({"error": "e", "traceback_tail": ["  File \"f.py\"", "ValueError: v"]})"}),
                ElementsAre("  File \"f.py\"", "ValueError: v"));
    EXPECT_TRUE(export_traceback_tail({"not json"}).empty());
}

TEST(TorchExporter, ReleaseVersionsCompareWithoutBuildTags) {
    EXPECT_EQ(release_version("2.11.0+cu130"), "2.11.0");
    EXPECT_EQ(release_version("1.13.0a0"), "1.13.0");
    EXPECT_EQ(release_version("2.6.0.dev20250101"), "2.6.0");
}

// Whole runs of the fake exporter, found through INFERBENCH_RUNNER_DIR.
class FakeExporter : public ::testing::Test {
protected:
    void SetUp() override { setenv("INFERBENCH_RUNNER_DIR", INFERBENCH_FAKE_EXPORTER_DIR, 1); }
    void TearDown() override {
        unsetenv("INFERBENCH_RUNNER_DIR");
        unsetenv("FAKE_REQUIRE_EXE");
        unsetenv("FAKE_SLOW_SECONDS");
    }
    ExportRequest request(const std::string& spec) const {
        ExportRequest r = resnet_request((dir_.path() / "cache").string());
        r.spec = spec;
        return r;
    }
    ExportCommand python() const { return {INFERBENCH_TEST_PYTHON, 0}; }
    std::string error_of(const std::string& spec, ExportCommand command) const {
        try {
            run_torch_export(request(spec), command);
        } catch (const std::exception& e) {
            return e.what();
        }
        return "(no error)";
    }
    testing::ScratchDir dir_;
};

TEST_F(FakeExporter, CompilesOnceThenAnswersFromTheCache) {
    const ExportOutcome first = run_torch_export(request("resnet50"), python());
    ASSERT_TRUE(first.model) << first.skip_reason;
    EXPECT_FALSE(first.model->cache_hit);
    EXPECT_GE(first.model->seconds, 0.3) << "the fake's compile";
    EXPECT_TRUE(std::filesystem::is_regular_file(first.model->path));
    EXPECT_THAT(first.model->inputs[0].shape, ElementsAre(8, 4));
    const ExportOutcome again = run_torch_export(request("resnet50"), python());
    ASSERT_TRUE(again.model);
    EXPECT_TRUE(again.model->cache_hit);
    EXPECT_EQ(again.model->path, first.model->path);
    EXPECT_LT(again.model->seconds, 0.3);
    ExportRequest other_batch = request("resnet50");
    other_batch.batch = 16;
    const ExportOutcome other = run_torch_export(other_batch, python());
    ASSERT_TRUE(other.model);
    EXPECT_FALSE(other.model->cache_hit) << "the batch is part of the key";
    EXPECT_NE(other.model->path, first.model->path);
}

TEST_F(FakeExporter, TheFirstInterpreterWhosePyTorchCanDoItRuns) {
    // Any interpreter but this one answers exit 3, as a python3 without PyTorch 2.x does.
    setenv("FAKE_REQUIRE_EXE", INFERBENCH_TEST_PYTHON, 1);
    const ExportOutcome outcome = run_torch_export(request("resnet50"), {"", 0});
    ASSERT_TRUE(outcome.model) << outcome.skip_reason;
    setenv("FAKE_REQUIRE_EXE", "/nonexistent/python3", 1);
    const ExportOutcome none = run_torch_export(request("resnet50"), {"", 0});
    EXPECT_FALSE(none.model);
    EXPECT_THAT(none.skip_reason, AllOf(HasSubstr("/usr/bin/python3: PyTorch is not importable by"),
                                        HasSubstr("python3: ")));
}

TEST_F(FakeExporter, WhatThisPyTorchCannotMakeIsASkip) {
    const ExportOutcome outcome = run_torch_export(request("fake:unsupported"), python());
    EXPECT_FALSE(outcome.model);
    EXPECT_EQ(outcome.skip_reason, std::string(INFERBENCH_TEST_PYTHON) +
                                       ": PyTorch 1.13.0 has no torch._inductor.aoti_compile_and_package; .pt2 "
                                       "packages need PyTorch >= 2.6");
}

TEST_F(FakeExporter, FailuresAreOneLineAndTheTracebackGoesToStderr) {
    ::testing::internal::CaptureStderr();
    const std::string raised = error_of("fake:raises", python());
    const std::string stderr_text = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(raised, "fake:raises: the factory raised RuntimeError: out of memory; fix the factory");
    EXPECT_THAT(stderr_text, AllOf(HasSubstr("torch_export.py traceback (last lines):"),
                                   HasSubstr("  RuntimeError: out of memory")));
    EXPECT_THAT(error_of("tv:resnet50", python()), StartsWith("unknown library 'tv' in spec 'tv:resnet50'"));
    EXPECT_THAT(error_of("fake:silent-fail", python()),
                HasSubstr("gave no error line; its last output: something went wrong before the answer"));
    EXPECT_THAT(error_of("fake:badjson", python()), HasSubstr("broke its contract"));
    EXPECT_THAT(error_of("fake:oom", python()), AllOf(HasSubstr("killed by signal 9"), HasSubstr("out-of-memory")));
}

TEST_F(FakeExporter, ACompilePastItsTimeLimitIsStoppedAndSaysSo) {
    setenv("FAKE_SLOW_SECONDS", "30", 1);
    const auto begin = std::chrono::steady_clock::now();
    EXPECT_THAT(error_of("fake:slow", {INFERBENCH_TEST_PYTHON, 1'000'000'000}),
                AllOf(HasSubstr("did not finish exporting fake:slow"), HasSubstr("within 1s")));
    EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(10));
}

TEST_F(FakeExporter, NoInterpreterOrNoScriptIsAnEnvironmentError) {
    EXPECT_THAT(error_of("resnet50", {"/nonexistent/python3", 0}),
                AllOf(StartsWith("no Python could start torch_export.py: /nonexistent/python3: cannot start it"),
                      HasSubstr("python option")));
    setenv("INFERBENCH_RUNNER_DIR", dir_.path().c_str(), 1);
    EXPECT_THAT(error_of("resnet50", python()),
                AllOf(StartsWith("torch_export.py not found in " + dir_.path().string()),
                      HasSubstr("INFERBENCH_RUNNER_DIR")));
}

}  // namespace
}  // namespace inferbench::external
