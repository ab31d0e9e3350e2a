// trtexec logs as stored benchmarks, on the real logs in shared/fixtures/trtexec: every figure below is
// copied from the file's text.
#include "importers/trtexec_import.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace inferbench::importers {
namespace {

using ::testing::HasSubstr;

const std::string kTrt10 = std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/trt10-resnet50-summary.log";
const std::string kTrt8 = std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/trt8-tf32-trace-3050.log";
// Stand-ins written from trtexec 11.1's source (tests/data/trtexec-standins/README.md), not real logs.
const std::string kStandins = INFERBENCH_STANDINS_DIR;
const std::string kTrt11 = kStandins + "/trt11-strongly-typed-summary.log";

double metric(const ImportedBenchmark& benchmark, const std::string& name) {
    const auto found = std::find_if(benchmark.metrics.begin(), benchmark.metrics.end(),
                                    [&](const store::Metric& m) { return m.name == name; });
    EXPECT_NE(found, benchmark.metrics.end()) << name;
    return found == benchmark.metrics.end() ? -1 : found->value;
}

std::string error_of(const std::string& file, const std::string& text) {
    try {
        trtexec_benchmark(file, text, {});
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(TrtexecImport, TheCommandLineGivesTheRowAndTheSummaryTheFigures) {
    const auto benchmark = trtexec_benchmark(kTrt10, read_regular_file(kTrt10), {});
    const auto& record = benchmark.record;
    EXPECT_EQ(record.model, "resnet50/model.onnx");  // --onnx=resnet50/model.onnx
    EXPECT_EQ(record.model_path, "resnet50/model.onnx");
    EXPECT_EQ(record.backend, "trtexec");
    EXPECT_EQ(record.device, "cuda:0");
    EXPECT_EQ(record.precision, "fp32");
    EXPECT_EQ(record.batch_size, 1);
    EXPECT_EQ(record.status, BenchmarkStatus::ok);
    EXPECT_EQ(record.measured_wall_ns, 3'003'900'000);  // Total Host Walltime: 3.0039 s
    EXPECT_DOUBLE_EQ(metric(benchmark, "throughput_qps"), 691.435);
    const auto settings = nlohmann::json::parse(record.settings_json);
    EXPECT_THAT(settings.at("imported_from").get<std::string>(), HasSubstr("trt10-resnet50-summary.log"));
    EXPECT_THAT(settings.at("trtexec_command").get<std::string>(), HasSubstr("--onnx=resnet50/model.onnx"));
    EXPECT_EQ(settings.at("trtexec_passed"), true);
}

TEST(TrtexecImport, WithoutACommandLineTheFileNamesTheModelAndTraceAveragesBecomeSeries) {
    const std::string text = read_regular_file(kTrt8);
    const auto benchmark = trtexec_benchmark(kTrt8, text, {});
    EXPECT_EQ(benchmark.record.model, "trt8-tf32-trace-3050");
    EXPECT_EQ(benchmark.record.device, "cuda:0");
    EXPECT_EQ(benchmark.record.batch_size, 1);
    std::size_t averages = 0;
    for (auto at = text.find("Average on "); at != std::string::npos; at = text.find("Average on ", at + 1)) ++averages;
    ASSERT_FALSE(benchmark.series.empty());
    for (const auto& series : benchmark.series) EXPECT_EQ(series.values.size(), averages) << series.name;
}

TEST(TrtexecImport, TheCommandLineOfInferbenchNamesModelAndDevice) {
    const auto benchmark = trtexec_benchmark(kTrt10, read_regular_file(kTrt10), {.model = "rn50", .device = "cuda:3"});
    EXPECT_EQ(benchmark.record.model, "rn50");
    EXPECT_EQ(benchmark.record.device, "cuda:3");
}

TEST(TrtexecImport, ALogWithoutAWholeSummaryIsRefused) {
    EXPECT_THAT(error_of("notes.txt", "hello\n"),
                HasSubstr("notes.txt: no trtexec performance summary in it"));
    const std::string text = read_regular_file(kTrt10);
    const auto cut = text.substr(0, text.find("GPU Compute Time: min"));
    EXPECT_THAT(error_of("cut.log", cut),
                HasSubstr("cut.log: the performance summary is incomplete (no 'GPU Compute Time: min = ...' line)"));
}

bool has_metric(const ImportedBenchmark& benchmark, const std::string& name) {
    return std::any_of(benchmark.metrics.begin(), benchmark.metrics.end(),
                       [&](const store::Metric& m) { return m.name == name; });
}

TEST(TrtexecImport, TensorRt11LogIsStronglyTypedWithoutTransferTimes) {
    const auto benchmark = trtexec_benchmark(kTrt11, read_regular_file(kTrt11), {});
    const auto& record = benchmark.record;
    EXPECT_EQ(record.backend_version, "11.1.0");
    EXPECT_EQ(record.precision, "typed");
    EXPECT_EQ(record.model, "resnet50/model_fp16.onnx");
    EXPECT_EQ(record.status, BenchmarkStatus::ok);
    EXPECT_DOUBLE_EQ(metric(benchmark, "throughput_qps"), 1951.2);
    EXPECT_DOUBLE_EQ(metric(benchmark, "gpu_compute_median_ms"), 0.509);
    EXPECT_FALSE(has_metric(benchmark, "h2d_mean_ms")) << "zeros printed for transfers never made";
    EXPECT_FALSE(has_metric(benchmark, "d2h_mean_ms"));
    const auto settings = nlohmann::json::parse(record.settings_json);
    EXPECT_EQ(settings.at("strongly_typed"), true);
    EXPECT_EQ(settings.at("data_transfers"), false);
    EXPECT_EQ(settings.at("cuda_graph"), true);
    EXPECT_EQ(settings.at("build_precision"), "Strongly Typed");
    ASSERT_EQ(settings.at("trtexec_notes").size(), 2u);
    EXPECT_THAT(settings.at("trtexec_notes")[1].get<std::string>(), HasSubstr("no H2D or D2H time was measured"));

    const std::string with_transfers = kStandins + "/trt11-transfers-summary.log";
    const auto measured = trtexec_benchmark(with_transfers, read_regular_file(with_transfers), {});
    EXPECT_DOUBLE_EQ(metric(measured, "h2d_mean_ms"), 0.0335);
    EXPECT_EQ(nlohmann::json::parse(measured.record.settings_json).at("trtexec_notes").size(), 1u)
        << "strongly typed, and its transfers measured";
}

TEST(TrtexecImport, TensorRt10LogKeepsItsFlagsPrecision) {
    const std::string text = "&&&& RUNNING TensorRT.trtexec [TensorRT v101300] [b6] # trtexec --onnx=m.onnx --fp16\n" +
                             read_regular_file(kTrt10).substr(read_regular_file(kTrt10).find("[04/07"));
    const auto benchmark = trtexec_benchmark("fp16.log", text, {});
    EXPECT_EQ(benchmark.record.precision, "fp16") << "--fp16 is TensorRT 10's precision flag";
    EXPECT_EQ(benchmark.record.backend_version, "10.13.0");
    EXPECT_EQ(nlohmann::json::parse(benchmark.record.settings_json).at("strongly_typed"), false);
}

TEST(TrtexecImport, ARemovedFlagIsExplainedNotMisread) {
    const std::string refused = kStandins + "/trt11-removed-fp16.log";
    EXPECT_EQ(error_of(refused, read_regular_file(refused)),
              refused + ": trtexec 11.1.0 refused --fp16: --fp16 was removed in TensorRT 11 (every network is strongly "
                        "typed: the precision comes from the ONNX file's types); this run built no engine and measured "
                        "nothing. Convert the ONNX file to the precision first (inferbench run with the trtexec backend "
                        "does) and import that run's log");
    EXPECT_EQ(error_of("odd.log", "[E] Unknown option: --frobnicate \n"),
              "odd.log: trtexec refused the option --frobnicate ('Unknown option') and measured nothing; import the "
              "log of a run it accepted");
    // A TensorRT 11 banner with --int8 and a summary: no trtexec 11 prints that, so it is not read as int8.
    std::string joined = read_regular_file(kTrt11);
    joined.replace(joined.find("--saveEngine=resnet50/model.plan"), 0, "--int8 ");
    EXPECT_THAT(error_of("joined.log", joined),
                HasSubstr("joined.log: the command line holds --int8, which trtexec 11.1.0 refuses (--int8 was removed "
                          "in TensorRT 11"));
    EXPECT_THAT(error_of("joined.log", joined), HasSubstr("is it two logs joined?"));
}

TEST(TrtexecImport, ATuningLoopIsOneLogOfManyRunsAndIsRefusedNamingTheBestRoute) {
    const std::string tuning = kStandins + "/trt11-tuning-loop.log";
    EXPECT_EQ(error_of(tuning, read_regular_file(tuning)),
              tuning + ": a --tuneBuildRoutes loop with 2 performance summaries, one per build route; import one run's "
                       "log: the best route was '-conv_use_long_w=on' (trtexec --setBuildRoute='-conv_use_long_w=on' "
                       "builds it)");
    const std::string twice = read_regular_file(kTrt10) + read_regular_file(kTrt10);
    EXPECT_EQ(error_of("twice.log", twice),
              "twice.log: 2 performance summaries, one per trtexec run; import each run's own log");
}

TEST(TrtexecImport, ANewerTensorRtThanKnownIsRefusedInOneLine) {
    std::string text = read_regular_file(kTrt11);
    for (auto at = text.find("v110100"); at != std::string::npos; at = text.find("v110100")) text.replace(at, 7, "v120000");
    EXPECT_EQ(error_of("future.log", text),
              "future.log: the log's header says TensorRT 12.0.0, newer than the newest major version this inferbench "
              "knows (11.x): its command line and lines may mean something else, so nothing is read; use an "
              "inferbench that knows TensorRT 12");
}

TEST(TrtexecImport, BenchmarksAreStoredInTheirOrderAsOneCompletedRun) {
    testing::ScratchDir dir;
    auto results = store::ResultsStore::open(dir.file("r.db"));
    const auto benchmarks = read_trtexec_logs({kTrt8, kTrt10}, {});
    const auto run_id = store_import(results, import_run("trtexec", "import", {kTrt8, kTrt10}), benchmarks);
    const auto runs = results.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].run_id, run_id);
    EXPECT_EQ(runs[0].status, RunStatus::completed);
    EXPECT_EQ(nlohmann::json::parse(runs[0].plan_json).at("import"), "trtexec");
    const auto stored = results.benchmarks();
    ASSERT_EQ(stored.size(), 2u);
    for (std::size_t i = 0; i < stored.size(); ++i) {
        EXPECT_EQ(stored[i].run_id, run_id);
        EXPECT_EQ(stored[i].ordinal, static_cast<std::int64_t>(i));
        EXPECT_EQ(stored[i].model, benchmarks[i].record.model);
        EXPECT_EQ(results.metrics(stored[i].benchmark_id).size(), benchmarks[i].metrics.size());
        EXPECT_EQ(results.series(stored[i].benchmark_id).size(), benchmarks[i].series.size());
    }
}

}  // namespace
}  // namespace inferbench::importers
