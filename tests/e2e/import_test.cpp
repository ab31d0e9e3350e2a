// `inferbench import trtexec` through the real CLI on the real logs in shared/fixtures/trtexec, then
// `summary --json`: the figures shown are the logs' own.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;

const std::string kTrt8 = std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/trt8-tf32-trace-3050.log";
const std::string kTrt10 = std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/trt10-resnet50-summary.log";

TEST(Import, TrtexecLogsAreSummarisedWithTheirOwnFigures) {
    testing::CliScratch dir;
    const auto imported = dir.run("import trtexec '" + kTrt8 + "' '" + kTrt10 + "' --db r.db");
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_THAT(imported.out, HasSubstr("imported 2 trtexec logs into r.db (run 1)"));

    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto rows = nlohmann::json::parse(summary.out).at("rows");
    ASSERT_EQ(rows.size(), 2u);

    // TensorRT 8: End-to-End Host Latency is the end-to-end figure; 99th percentile only.
    const auto& trt8 = rows[0];
    EXPECT_EQ(trt8["model"], "trt8-tf32-trace-3050");  // no command line in the log: its file name
    EXPECT_EQ(trt8["backend"], "trtexec");
    EXPECT_EQ(trt8["device"], "cuda:0");
    EXPECT_EQ(trt8["precision"], "fp32");
    EXPECT_EQ(trt8["batch_size"], 1);
    EXPECT_EQ(trt8["status"], "ok");
    EXPECT_EQ(trt8["iterations"], 89);  // 28.9757 qps x 3.07153 s
    EXPECT_DOUBLE_EQ(trt8["mean_ms"].get<double>(), 35.0105);
    EXPECT_DOUBLE_EQ(trt8["p50_ms"].get<double>(), 34.9216);
    EXPECT_TRUE(trt8["p90_ms"].is_null());
    EXPECT_DOUBLE_EQ(trt8["p99_ms"].get<double>(), 36.156);
    EXPECT_TRUE(trt8["cv_pct"].is_null()) << "trtexec does not print the end-to-end deviation";
    EXPECT_DOUBLE_EQ(trt8["throughput_per_s"].get<double>(), 28.9757);
    EXPECT_THAT(trt8["note"].get<std::string>(),
                HasSubstr("imported from a trtexec log: statistics as trtexec computed them; Throughput may be "
                          "bound by Enqueue Time"));

    // TensorRT 10: no End-to-End line, so (host) Latency; percentiles 90, 95 and 99.
    const auto& trt10 = rows[1];
    EXPECT_EQ(trt10["model"], "resnet50/model.onnx");
    EXPECT_EQ(trt10["precision"], "fp32");
    EXPECT_EQ(trt10["batch_size"], 1);
    EXPECT_EQ(trt10["iterations"], 2077);  // 691.435 qps x 3.0039 s
    EXPECT_DOUBLE_EQ(trt10["mean_ms"].get<double>(), 1.48372);
    EXPECT_DOUBLE_EQ(trt10["p50_ms"].get<double>(), 1.43823);
    EXPECT_DOUBLE_EQ(trt10["p90_ms"].get<double>(), 1.45624);
    EXPECT_DOUBLE_EQ(trt10["p99_ms"].get<double>(), 2.61597);
    EXPECT_DOUBLE_EQ(trt10["throughput_per_s"].get<double>(), 691.435);
    EXPECT_THAT(trt10["note"].get<std::string>(),
                HasSubstr("GPU compute time is unstable, with coefficient of variance = 13.1794%."));

    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto runs = store.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].name, "import");
    EXPECT_EQ(runs[0].status, "completed");
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[1].backend_version, "10.9.0");
    EXPECT_EQ(benchmarks[1].measured_wall_ns, 3'003'900'000);
    EXPECT_TRUE(store.iterations(benchmarks[1].benchmark_id).empty());
    double d2h_p95 = 0;
    for (const auto& m : store.metrics(benchmarks[1].benchmark_id))
        if (m.name == "d2h_p95_ms") d2h_p95 = m.value;
    EXPECT_DOUBLE_EQ(d2h_p95, 0.00500488);
    const auto series = store.series(benchmarks[0].benchmark_id);
    ASSERT_EQ(series.size(), 4u);
    EXPECT_EQ(series[2].name, "gpu_latency_ms");
    ASSERT_EQ(series[2].values.size(), 8u);
    EXPECT_DOUBLE_EQ(series[2].values[0], 33.8371);
}

TEST(Import, NamesAndDeviceFromTheCommandLine) {
    testing::CliScratch dir;
    const auto r = dir.run("import trtexec '" + kTrt10 + "' --db r.db --name h200-logs --model resnet50 --device 'cuda:3'");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    EXPECT_EQ(store.runs().at(0).name, "h200-logs");
    const auto benchmark = store.benchmarks().at(0);
    EXPECT_EQ(benchmark.model, "resnet50");
    EXPECT_EQ(benchmark.device, "cuda:3");
    EXPECT_EQ(benchmark.model_path, "resnet50/model.onnx");
}

TEST(Import, NotATrtexecLogIsRefusedBeforeAnythingIsWritten) {
    testing::CliScratch dir;
    dir.write("notes.txt", "nothing to see here\n");
    const auto r = dir.run("import trtexec '" + kTrt10 + "' notes.txt --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("notes.txt: no trtexec performance summary in it"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
    const auto missing = dir.run("import trtexec absent.log --db r.db");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_THAT(missing.err, HasSubstr("absent.log: cannot read this file"));
    EXPECT_EQ(dir.run("import trtexec --db r.db").exit_code, 2) << "at least one log";
}

}  // namespace
}  // namespace inferbench
