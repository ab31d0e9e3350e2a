// `inferbench import trtexec` through the real CLI on the real logs in shared/fixtures/trtexec, then
// `summary --json`: the figures shown are the logs' own.
#include <sys/stat.h>

#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
    // A column without a value in any row is left out of the JSON.
    EXPECT_TRUE(!trt8.contains("cv_pct") || trt8.at("cv_pct").is_null()) << "trtexec does not print the end-to-end deviation";
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
    EXPECT_EQ(runs[0].status, RunStatus::completed);
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

// Stand-ins written from trtexec 11.1's source (tests/data/trtexec-standins/README.md), not real logs.
const std::string kTrt11 = std::string(INFERBENCH_STANDINS_DIR) + "/trt11-strongly-typed-summary.log";
const std::string kTrt11Refused = std::string(INFERBENCH_STANDINS_DIR) + "/trt11-removed-fp16.log";

TEST(Import, TensorRt11LogsAreStronglyTypedAndARefusedFlagIsExplained) {
    testing::CliScratch dir;
    const auto imported = dir.run("import trtexec '" + kTrt11 + "' --db r.db");
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto rows = nlohmann::json::parse(summary.out).at("rows");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0]["precision"], "typed");
    EXPECT_EQ(rows[0]["model"], "resnet50/model_fp16.onnx");
    EXPECT_DOUBLE_EQ(rows[0]["throughput_per_s"].get<double>(), 1951.2);
    EXPECT_THAT(rows[0]["note"].get<std::string>(), HasSubstr("Latency is the GPU compute time alone"));

    const auto refused = dir.run("import trtexec '" + kTrt11Refused + "' --db r.db");
    EXPECT_EQ(refused.exit_code, 2);
    EXPECT_EQ(refused.err, "inferbench: error: " + kTrt11Refused + ": trtexec 11.1.0 refused --fp16: --fp16 was removed in "
                           "TensorRT 11 (every network is strongly typed: the precision comes from the ONNX file's "
                           "types); this run built no engine and measured nothing. Convert the ONNX file to the "
                           "precision first (inferbench run with the trtexec backend does) and import that run's log\n");
    const auto after = dir.run("summary --db r.db --json");
    EXPECT_EQ(nlohmann::json::parse(after.out).at("rows").size(), 1u) << "the refused import stored nothing";
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
    EXPECT_THAT(missing.err, HasSubstr("absent.log: cannot read: No such file or directory"));
    EXPECT_EQ(dir.run("import trtexec --db r.db").exit_code, 2) << "at least one log";
}

std::string fixture_text(const std::string& path) { return testing::read_file(path); }

std::string without_lines_containing(const std::string& text, const std::vector<std::string>& needles) {
    std::string out;
    std::size_t begin = 0;
    while (begin < text.size()) {
        const auto end = std::min(text.find('\n', begin), text.size());
        const std::string line = text.substr(begin, end - begin);
        if (std::none_of(needles.begin(), needles.end(), [&](const auto& n) { return line.find(n) != line.npos; }))
            out += line + "\n";
        begin = end + 1;
    }
    return out;
}

TEST(Import, ALogCutInsideItsSummaryIsRefused) {
    testing::CliScratch dir;
    const std::string whole = fixture_text(kTrt10);
    dir.write("cut.log", whole.substr(0, whole.find("[I] GPU Compute Time")));
    const auto r = dir.run("import trtexec cut.log --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: cut.log: the performance summary is incomplete (no 'GPU Compute Time: min "
                     "= ...' line); was the log cut short? Import trtexec's whole output\n");
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
}

TEST(Import, FiguresNoMeasurementHasAreRefusedNamingTheLine) {
    testing::CliScratch dir;
    std::string edited = fixture_text(kTrt10);
    edited.replace(edited.find("mean = 1.48372 ms"), 17, "mean = -1e308 ms");
    dir.write("edited.log", edited);
    const auto r = dir.run("import trtexec edited.log --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("edited.log line 5: mean = -1e+308 ms is not a possible time: 'Latency: min = "));
    EXPECT_THAT(r.err, HasSubstr("these are not measurements"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
}

TEST(Import, ADirectoryOrAFifoIsNamedForWhatItIs) {
    testing::CliScratch dir;
    std::filesystem::create_directory(dir.path() / "logs");
    ASSERT_EQ(::mkfifo(dir.file("pipe").c_str(), 0600), 0);
    const auto directory = dir.run("import trtexec logs --db r.db");
    EXPECT_EQ(directory.exit_code, 2);
    EXPECT_EQ(directory.err, "inferbench: error: logs is a directory\n");
    const auto fifo = dir.run("import trtexec pipe --db r.db");  // no writer: must not wait for one
    EXPECT_EQ(fifo.exit_code, 2);
    EXPECT_EQ(fifo.err, "inferbench: error: pipe is a FIFO, not a regular file\n");
    const auto smi = dir.run("import nvidia-smi logs --db r.db");
    EXPECT_EQ(smi.exit_code, 2);
    EXPECT_EQ(smi.err, "inferbench: error: logs is a directory\n");
}

// TensorRT 7 printed no totals, so the query count is unknown: the summary shows the log's throughput
// and latencies all the same, and leaves only the iteration count empty.
TEST(Import, ASummaryWithoutTotalsShowsItsThroughputAndLatencies) {
    testing::CliScratch dir;
    dir.write("no-totals.log", without_lines_containing(fixture_text(kTrt10), {"Total Host Walltime", "Total GPU"}));
    const auto imported = dir.run("import trtexec no-totals.log --db r.db");
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    const auto row = nlohmann::json::parse(summary.out).at("rows").at(0);
    EXPECT_TRUE(!row.contains("iterations") || row.at("iterations").is_null()) << "no walltime: the count is not known";
    EXPECT_DOUBLE_EQ(row["mean_ms"].get<double>(), 1.48372);
    EXPECT_DOUBLE_EQ(row["p50_ms"].get<double>(), 1.43823);
    EXPECT_DOUBLE_EQ(row["p99_ms"].get<double>(), 2.61597);
    EXPECT_DOUBLE_EQ(row["throughput_per_s"].get<double>(), 691.435);
    EXPECT_DOUBLE_EQ(row["gpu_compute_p50_ms"].get<double>(), 1.39775);
}

// A terminal wide enough for each log's line whole, the fixtures' absolute paths included (lines wrap to
// the width: outputs_test checks that).
const std::string kOneLine = "env COLUMNS=1000";

const std::string kSmiLoadCsv = std::string(INFERBENCH_FIXTURES_DIR) + "/nvidia-smi/h200-load-query-200ms.csv";
const std::string kSmiLoadText = std::string(INFERBENCH_FIXTURES_DIR) + "/nvidia-smi/h200-load-q-5x1s.txt";

TEST(Import, TraceLinesWithImpossibleTimesAreRefusedNamingTheLine) {
    testing::CliScratch dir;
    std::string edited = fixture_text(kTrt8);
    edited.replace(edited.find("GPU latency: 33.5586 ms"), 23, "GPU latency: -1e308 ms");
    dir.write("trace.log", edited);
    const auto r = dir.run("import trtexec trace.log --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_THAT(r.err, HasSubstr("trace.log line 4: gpu_latency_ms = -1e+308 ms is not a possible time: 'Average on"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
}

TEST(Import, NvidiaSmiLogsBecomeGpuTelemetry) {
    testing::CliScratch dir;
    const auto imported = dir.run("import nvidia-smi '" + kSmiLoadCsv + "' '" + kSmiLoadText + "' --db r.db", kOneLine);
    ASSERT_EQ(imported.exit_code, 0) << imported.err;
    EXPECT_EQ(imported.err, "");
    EXPECT_THAT(imported.out,
                HasSubstr(kSmiLoadCsv + ": query-csv, 10 samples, 1 GPU (NVIDIA H200), 1.808 s, power mean 691.5 W, "
                                        "max 692.9 W, clock event reasons: SW power cap\n"));
    EXPECT_THAT(imported.out,
                HasSubstr(kSmiLoadText + ": q-text, 5 samples, 1 GPU (NVIDIA H200), 5.000 s, power mean 310.4 W, "
                                         "max 734.25 W, clock event reasons: GPU idle, SW power cap\n"));
    EXPECT_THAT(imported.out, HasSubstr("imported 2 nvidia-smi logs into r.db (run 1)"));

    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto runs = store.runs();
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(runs[0].name, "import nvidia-smi h200-load-query-200ms.csv h200-load-q-5x1s.txt");
    EXPECT_EQ(runs[0].status, RunStatus::completed);
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    const auto& csv = benchmarks[0];
    EXPECT_EQ(csv.model, "h200-load-query-200ms");
    EXPECT_EQ(csv.backend, "nvidia-smi-log");
    EXPECT_EQ(csv.device, "cuda:0");
    EXPECT_EQ(csv.status, BenchmarkStatus::ok);
    EXPECT_EQ(csv.started_unix_ms, 1796004044465);  // 2026/11/30 02:00:44.465 as UTC
    EXPECT_EQ(csv.measured_wall_ns, 1'808'000'000);
    EXPECT_TRUE(store.iterations(csv.benchmark_id).empty());
    const auto samples = store.gpu_samples(csv.benchmark_id);
    ASSERT_EQ(samples.size(), 10u);
    EXPECT_EQ(samples[0].phase, SamplePhase::measure);
    EXPECT_EQ(samples[0].power_w, 691.39);
    EXPECT_EQ(samples[2].t_ns, 406'000'000);
    EXPECT_EQ(samples[2].sm_clock_mhz, 1500.0);
    EXPECT_EQ(samples[9].power_w, 690.02);
    EXPECT_EQ(samples[9].clock_event_reasons, clock_event::kSwPowerCap);
    EXPECT_FALSE(samples[9].power_avg_w) << "not in that query";
    const auto sources = store.telemetry_sources(csv.benchmark_id);
    ASSERT_EQ(sources.size(), 1u);
    EXPECT_EQ(sources[0].source, "nvidia-smi");
    EXPECT_EQ(sources[0].status, "ok");
    EXPECT_EQ(sources[0].detail, "imported from " + kSmiLoadCsv + " (query-csv)");

    const auto& text = benchmarks[1];
    EXPECT_EQ(text.backend_version, "580.159.04");
    const auto dumps = store.gpu_samples(text.benchmark_id);
    ASSERT_EQ(dumps.size(), 5u);
    EXPECT_EQ(dumps[3].t_ns, 4'000'000'000);
    EXPECT_EQ(dumps[3].power_w, 734.25);
    EXPECT_EQ(dumps[3].power_avg_w, 600.58);
    EXPECT_EQ(dumps[3].pcie_rx_kib_s, 16983.0);
    EXPECT_EQ(dumps[3].pstate, 0);

    const auto summary = dir.run("summary --db r.db --json");
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
}

// The real gpu_log: three dumps of an idle H200 (GPU-idle reason set, SM clock 345 MHz), then a
// power-capped GEMM. The idle clock is not a clock that fell while measuring, and the log's group has no
// precision: its titles and file names leave that field out.
TEST(Import, AnIdleGpusClockIsNoFallAndTheLogsTitlesHaveNoEmptyField) {
    testing::CliScratch dir;
    ASSERT_EQ(dir.run("import nvidia-smi '" + kSmiLoadText + "' --db r.db").exit_code, 0);
    const auto summary = dir.run("summary --db r.db --json");
    ASSERT_EQ(summary.exit_code, 0) << summary.err;
    EXPECT_THAT(summary.out, HasSubstr("\"note\""));  // where the summary says such warnings
    EXPECT_THAT(summary.out + summary.err, Not(HasSubstr("SM clock fell")));
    const auto report_html_warnings = dir.run("report --db r.db --out warn --no-excel --no-plots");
    ASSERT_EQ(report_html_warnings.exit_code, 0) << report_html_warnings.err;
    EXPECT_THAT(testing::read_file(dir.file("warn/report.html")), Not(HasSubstr("SM clock fell")));
    const auto report = dir.run("report --db r.db --out rep --image-format svg --no-excel");
    ASSERT_EQ(report.exit_code, 0) << report.err;
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("rep"))) {
        const std::string stem = entry.path().stem().string();
        EXPECT_FALSE(stem.ends_with("-_") || stem.find("-_-") != std::string::npos) << entry.path();
        ++files;
    }
    EXPECT_GT(files, 1u);
    const std::string html = testing::read_file(dir.file("rep/report.html"));
    EXPECT_THAT(html, HasSubstr("h200-load-q-5x1s / nvidia-smi-log / cuda:0"));
    EXPECT_THAT(html, Not(HasSubstr(" /  / ")));
}

TEST(Import, NvidiaSmiOptionsAndHeaderlessCsv) {
    testing::CliScratch dir;
    dir.write("sampler.csv", "1, 734.25, 600.58, 700.00, 49, 33, 1515, 3201, 1515, 100, 25, 1139, 143771, P0, 0x4\n"
                             "1, 587.31, 688.30, 700.00, 52, 37, 1395, 3201, 1395, 100, 24, 1139, 143771, P0, 0x4\n");
    dir.write("two-columns.csv", "3, 250.5\n3, 251.5\n");
    const auto r = dir.run("import nvidia-smi sampler.csv --db r.db --name h200-gemm --model gemm-bf16", kOneLine);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("sampler.csv: query-csv, 2 samples, 1 GPU, no time in the log, power mean 660.8 W, "
                                 "max 734.25 W, clock event reasons: SW power cap"));
    const auto fields = dir.run("import nvidia-smi two-columns.csv --db r.db --query-gpu index,power.draw --device gpu");
    ASSERT_EQ(fields.exit_code, 0) << fields.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto runs = store.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[0].name, "h200-gemm");
    const auto benchmarks = store.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].model, "gemm-bf16");
    EXPECT_EQ(benchmarks[0].device, "cuda:1");
    EXPECT_EQ(store.gpu_samples(benchmarks[0].benchmark_id).at(1).temperature_c, 52.0);
    EXPECT_EQ(benchmarks[1].device, "gpu");
    const auto two = store.gpu_samples(benchmarks[1].benchmark_id);
    ASSERT_EQ(two.size(), 2u);
    EXPECT_EQ(two[1].gpu_index, 3);
    EXPECT_EQ(two[1].power_w, 251.5);
}

TEST(Import, NvidiaSmiLinesThatCannotBeReadAreNamedOnStderr) {
    testing::CliScratch dir;
    dir.write("cut.csv", "timestamp, power.draw [W], clocks.current.sm [MHz]\n"
                         "2026/11/30 02:00:44.465, 691.39 W, 1470 MHz\n"
                         "2026/11/30 02:00:44.671, 692.90 W\n"
                         "2026/11/30 02:00:44.871, 691.68 W, 1500 MHz\n");
    const auto r = dir.run("import nvidia-smi cut.csv --db r.db", kOneLine);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "cut.csv: warning: line 3: 2 columns, expected 3; skipped\n");
    EXPECT_THAT(r.out, HasSubstr("cut.csv: query-csv, 2 samples, 1 GPU, 0.406 s, power mean 691.5 W, max 691.68 W, "
                                 "no clock event reasons in the log\n"));
}

TEST(Import, BadNvidiaSmiLogIsRefusedBeforeAnythingIsWritten) {
    testing::CliScratch dir;
    dir.write("notes.txt", "nothing to see here\n");
    const auto r = dir.run("import nvidia-smi '" + kSmiLoadCsv + "' notes.txt --db r.db");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "inferbench: error: notes.txt: not an nvidia-smi log (expected -q, -q -x, --query-gpu CSV or dmon output)\n");
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
    dir.write("cut.xml", "<?xml version=\"1.0\" ?>\n<nvidia_smi_log>\n\t<gpu id=\"00000000:00:06.0\">\n\t\t<fb_memory");
    const auto cut = dir.run("import nvidia-smi cut.xml --db r.db");
    EXPECT_EQ(cut.exit_code, 2);
    EXPECT_THAT(cut.err, HasSubstr("cut.xml: line 4: unterminated tag <fb_memory: not a complete nvidia-smi -q -x document"));
    EXPECT_FALSE(std::filesystem::exists(dir.file("r.db")));
    EXPECT_EQ(dir.run("import nvidia-smi absent.csv --db r.db").exit_code, 2);
    EXPECT_EQ(dir.run("import nvidia-smi --db r.db").exit_code, 2) << "at least one log";
    EXPECT_EQ(dir.run("import nvidia-smi '" + kSmiLoadCsv + "' --db r.db --query-gpu index,,power.draw").exit_code, 2);
}

}  // namespace
}  // namespace inferbench
