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
