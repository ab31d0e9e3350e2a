// The trtexec log parser on the real logs in shared/fixtures/trtexec: every number below is copied
// from the file's text.
#include "backends/trtexec/trtexec_log.hpp"

#include "core/metrics/trtexec_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>

namespace inferbench::trtexec {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/" + name, std::ios::binary);
    EXPECT_TRUE(in) << name;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void expect_statistic(const TrtexecLog& log, const std::string& quantity, double min, double max, double mean,
                      double median) {
    SCOPED_TRACE(quantity);
    ASSERT_TRUE(log.statistics.contains(quantity));
    const LogStatistic& s = log.statistics.at(quantity);
    EXPECT_DOUBLE_EQ(s.min_ms, min);
    EXPECT_DOUBLE_EQ(s.max_ms, max);
    EXPECT_DOUBLE_EQ(s.mean_ms, mean);
    EXPECT_DOUBLE_EQ(s.median_ms, median);
}

TEST(TrtexecLog, TensorRt8TraceLogWithEndToEndLine) {
    const TrtexecLog log = parse_trtexec_log(fixture("trt8-tf32-trace-3050.log"));
    EXPECT_EQ(log.tensorrt_version, "");  // the excerpt has no banner
    EXPECT_FALSE(log.command.has_value());
    ASSERT_TRUE(log.throughput_qps);
    EXPECT_DOUBLE_EQ(*log.throughput_qps, 28.9757);
    EXPECT_EQ(log.statistics.size(), 6u);
    expect_statistic(log, "host_latency", 34.6697, 36.1511, 35.0057, 34.916);
    expect_statistic(log, "e2e_host_latency", 34.6746, 36.156, 35.0105, 34.9216);
    expect_statistic(log, "enqueue", 34.2643, 35.6603, 34.4884, 34.4119);
    expect_statistic(log, "h2d", 0.788696, 1.17773, 0.828755, 0.80957);
    expect_statistic(log, "gpu_compute", 33.4643, 34.8665, 33.664, 33.5995);
    expect_statistic(log, "d2h", 0.289551, 0.793457, 0.512931, 0.497314);
    // TensorRT 8 prints the 99th percentile only.
    EXPECT_THAT(log.statistics.at("host_latency").percentiles_ms, ElementsAre(Pair(99.0, 36.1511)));
    EXPECT_THAT(log.statistics.at("e2e_host_latency").percentiles_ms, ElementsAre(Pair(99.0, 36.156)));
    EXPECT_THAT(log.statistics.at("enqueue").percentiles_ms, ElementsAre(Pair(99.0, 35.6603)));
    EXPECT_THAT(log.statistics.at("h2d").percentiles_ms, ElementsAre(Pair(99.0, 1.17773)));
    EXPECT_THAT(log.statistics.at("gpu_compute").percentiles_ms, ElementsAre(Pair(99.0, 34.8665)));
    EXPECT_THAT(log.statistics.at("d2h").percentiles_ms, ElementsAre(Pair(99.0, 0.793457)));
    EXPECT_FALSE(log.statistics.at("gpu_compute").percentile(90));
    EXPECT_DOUBLE_EQ(log.total_host_walltime_s.value_or(0), 3.07153);
    EXPECT_DOUBLE_EQ(log.total_gpu_compute_time_s.value_or(0), 2.9961);
    EXPECT_EQ(log.measured_queries(), 89);  // 28.9757 qps x 3.07153 s = 88.9999
    ASSERT_EQ(log.warnings.size(), 1u);
    EXPECT_EQ(log.warnings[0],
              "Throughput may be bound by Enqueue Time rather than GPU Compute and the GPU may be under-utilized. "
              "If not already in use, --useCudaGraph (utilize CUDA graphs where possible) may increase the throughput.");
    EXPECT_TRUE(log.enqueue_bound);
    EXPECT_FALSE(log.gpu_compute_cv_pct);
    EXPECT_FALSE(log.passed);
}

TEST(TrtexecLog, TensorRt8TraceAverages) {
    const TrtexecLog log = parse_trtexec_log(fixture("trt8-tf32-trace-3050.log"));
    EXPECT_EQ(log.runs_per_average, 10);
    ASSERT_EQ(log.trace_averages_ms.size(), 4u);
    EXPECT_THAT(log.trace_averages_ms.at("gpu_latency_ms"),
                ElementsAre(33.8371, 33.5586, 33.717, 33.6805, 33.5955, 33.6902, 33.6041, 33.6895));
    EXPECT_THAT(log.trace_averages_ms.at("host_latency_ms"),
                ElementsAre(35.1268, 34.8392, 35.0445, 34.978, 34.8849, 35.0375, 35.0108, 35.1783));
    EXPECT_THAT(log.trace_averages_ms.at("end_to_end_ms"),
                ElementsAre(35.1314, 34.8435, 35.0494, 34.9823, 34.8894, 35.0424, 35.016, 35.1835));
    EXPECT_THAT(log.trace_averages_ms.at("enqueue_ms"),
                ElementsAre(34.6321, 34.35, 34.5316, 34.4815, 34.3928, 34.5155, 34.4454, 34.6011));
}

TEST(TrtexecLog, TensorRt10SummaryWithThreePercentiles) {
    const TrtexecLog log = parse_trtexec_log(fixture("trt10-resnet50-summary.log"));
    EXPECT_EQ(log.tensorrt_version, "10.9.0");  // [TensorRT v100900]
    ASSERT_TRUE(log.command.has_value());
    EXPECT_EQ(log.command->text, "trtexec --onnx=resnet50/model.onnx --saveEngine=resnet50/model.trt");
    EXPECT_EQ(log.command->onnx, "resnet50/model.onnx");
    EXPECT_EQ(log.command->save_engine, "resnet50/model.trt");
    EXPECT_EQ(precision_label(*log.command), "fp32");
    EXPECT_FALSE(log.command->batch);
    EXPECT_DOUBLE_EQ(log.throughput_qps.value_or(0), 691.435);
    EXPECT_EQ(log.statistics.size(), 5u);  // no End-to-End Host Latency line
    EXPECT_FALSE(log.statistics.contains("e2e_host_latency"));
    expect_statistic(log, "host_latency", 1.4209, 3.047, 1.48372, 1.43823);
    expect_statistic(log, "enqueue", 0.208801, 0.461304, 0.263621, 0.259033);
    expect_statistic(log, "h2d", 0.0258789, 0.0687256, 0.0362824, 0.0361328);
    expect_statistic(log, "gpu_compute", 1.38855, 3.00439, 1.44357, 1.39775);
    expect_statistic(log, "d2h", 0.00286865, 0.00561523, 0.00387057, 0.00366211);
    const auto percentiles = [&](const char* q) { return log.statistics.at(q).percentiles_ms; };
    EXPECT_THAT(percentiles("host_latency"), ElementsAre(Pair(90.0, 1.45624), Pair(95.0, 1.71796), Pair(99.0, 2.61597)));
    EXPECT_THAT(percentiles("enqueue"), ElementsAre(Pair(90.0, 0.293823), Pair(95.0, 0.311768), Pair(99.0, 0.402832)));
    EXPECT_THAT(percentiles("h2d"), ElementsAre(Pair(90.0, 0.0378418), Pair(95.0, 0.0385742), Pair(99.0, 0.0616455)));
    EXPECT_THAT(percentiles("gpu_compute"), ElementsAre(Pair(90.0, 1.40308), Pair(95.0, 1.67834), Pair(99.0, 2.57642)));
    EXPECT_THAT(percentiles("d2h"),
                ElementsAre(Pair(90.0, 0.00488281), Pair(95.0, 0.00500488), Pair(99.0, 0.00537109)));
    EXPECT_DOUBLE_EQ(log.total_host_walltime_s.value_or(0), 3.0039);
    EXPECT_DOUBLE_EQ(log.total_gpu_compute_time_s.value_or(0), 2.9983);
    EXPECT_EQ(log.measured_queries(), 2077);  // 691.435 qps x 3.0039 s = 2076.99
    ASSERT_EQ(log.warnings.size(), 1u);
    EXPECT_EQ(log.warnings[0],
              "GPU compute time is unstable, with coefficient of variance = 13.1794%. If not already in use, "
              "locking GPU clock frequency or adding --useSpinWait may improve the stability.");
    EXPECT_DOUBLE_EQ(log.gpu_compute_cv_pct.value_or(0), 13.1794);
    EXPECT_FALSE(log.enqueue_bound);
    EXPECT_EQ(log.passed, true);
    EXPECT_EQ(log.runs_per_average, 10);
    ASSERT_EQ(log.trace_averages_ms.size(), 3u);  // no "end to end" in TensorRT 10's trace line
    EXPECT_THAT(log.trace_averages_ms.at("gpu_latency_ms"), ElementsAre(1.39878));
    EXPECT_THAT(log.trace_averages_ms.at("host_latency_ms"), ElementsAre(1.43972));
    EXPECT_THAT(log.trace_averages_ms.at("enqueue_ms"), ElementsAre(0.261963));
}

TEST(TrtexecLog, MetricsNameEveryFigureWithItsUnit) {
    const auto metrics = log_metrics(parse_trtexec_log(fixture("trt10-resnet50-summary.log")));
    const auto find = [&](const std::string& name) -> const LogMetric* {
        for (const auto& m : metrics)
            if (m.name == name) return &m;
        return nullptr;
    };
    // 5 quantities x (min, max, mean, median, p90, p95, p99) + qps, queries, 2 totals, cv, trace runs.
    EXPECT_EQ(metrics.size(), 5u * 7u + 6u);
    ASSERT_TRUE(find("gpu_compute_p95_ms"));
    EXPECT_DOUBLE_EQ(find("gpu_compute_p95_ms")->value, 1.67834);
    EXPECT_EQ(find("gpu_compute_p95_ms")->unit, "ms");
    EXPECT_DOUBLE_EQ(find("host_latency_median_ms")->value, 1.43823);
    EXPECT_DOUBLE_EQ(find("throughput_qps")->value, 691.435);
    EXPECT_EQ(find("throughput_qps")->unit, "qps");
    EXPECT_DOUBLE_EQ(find("queries")->value, 2077);
    EXPECT_DOUBLE_EQ(find("total_host_walltime_s")->value, 3.0039);
    EXPECT_EQ(find("total_host_walltime_s")->unit, "s");
    EXPECT_DOUBLE_EQ(find("gpu_compute_cv_pct")->value, 13.1794);
    EXPECT_EQ(find("gpu_compute_cv_pct")->unit, "%");
}

// Every figure is stored under a name core/metrics/trtexec_metrics.hpp declares, the names the summary and the findings
// read back; the names themselves are the store's format, so they are pinned here as text.
TEST(TrtexecLog, MetricsAreStoredUnderTheDeclaredNames) {
    namespace names = trtexec_metrics;
    const auto metrics = log_metrics(parse_trtexec_log(fixture("trt10-resnet50-summary.log")));
    std::set<std::string> stored;
    for (const auto& m : metrics) stored.insert(m.name);
    std::set<std::string> declared;
    for (const std::string_view name :
         {names::kThroughputQps, names::kQueries, names::kTotalHostWalltimeS, names::kTotalGpuComputeTimeS,
          names::kGpuComputeCvPct, names::kTraceAverageRuns})
        declared.emplace(name);
    const std::vector<std::string> statistics = {
        std::string(names::kMin), std::string(names::kMax), std::string(names::kMean), std::string(names::kMedian),
        names::percentile(90),    names::percentile(95),    names::percentile(99)};
    for (const std::string_view quantity :
         {names::kHostLatency, names::kEnqueue, names::kH2d, names::kGpuCompute, names::kD2h}) {
        for (const std::string& statistic : statistics) declared.insert(names::statistic_name(quantity, statistic));
    }
    EXPECT_EQ(stored, declared);
    EXPECT_EQ(names::statistic_name(names::kGpuCompute, names::kMean), "gpu_compute_mean_ms");
    EXPECT_EQ(names::statistic_name(names::kE2eHostLatency, names::percentile(99.9)), "e2e_host_latency_p99.9_ms");
    EXPECT_EQ(names::statistic_name(names::kHostLatency, names::kMedian), "host_latency_median_ms");
}

TEST(TrtexecLog, CrlfLineEndsParseTheSame) {
    for (const char* name : {"trt8-tf32-trace-3050.log", "trt10-resnet50-summary.log"}) {
        std::string crlf;
        for (const char c : fixture(name)) {
            if (c == '\n') crlf += '\r';
            crlf += c;
        }
        const auto plain = log_metrics(parse_trtexec_log(fixture(name)));
        const auto windows = log_metrics(parse_trtexec_log(crlf));
        ASSERT_EQ(plain.size(), windows.size()) << name;
        for (std::size_t i = 0; i < plain.size(); ++i) {
            EXPECT_EQ(plain[i].name, windows[i].name);
            EXPECT_EQ(plain[i].value, windows[i].value) << plain[i].name;
        }
        EXPECT_EQ(parse_trtexec_log(crlf).warnings, parse_trtexec_log(fixture(name)).warnings);
    }
}

TEST(TrtexecLog, VerboseLinesFailureAndUnknownLines) {
    const TrtexecLog log = parse_trtexec_log(
        "&&&& RUNNING TensorRT.trtexec [TensorRT v8601] # /usr/src/tensorrt/bin/trtexec --onnx=bert.onnx "
        "--fp16 --int8 --shapes=input_ids:8x128,mask:8x128 --device=1\n"
        "[08/01/2023-10:00:00] [I] TensorRT version: 8.6.1\n"
        "[08/01/2023-10:00:00] [I] Selected Device: NVIDIA H200\n"
        "something no parser knows: min = a lot\n"
        "[08/01/2023-10:00:00] [W] [TRT] CUDA lazy loading is not enabled.\n"
        "[08/01/2023-10:00:01] [I] Timing trace has 2500 queries over 3.01 s\n"
        "[08/01/2023-10:00:01] [I] Throughput: 830.5 qps\n"
        "[08/01/2023-10:00:01] [I] GPU Compute Time: min = 1 ms, max = 2 ms, mean = 1.5 ms, median = 1.4 ms, "
        "percentile(99.9%) = 1.9 ms\n"
        "&&&& FAILED TensorRT.trtexec [TensorRT v8601] # trtexec\n");
    EXPECT_EQ(log.tensorrt_version, "8.6.1");
    EXPECT_EQ(log.gpu_name, "NVIDIA H200");
    ASSERT_TRUE(log.command);
    EXPECT_EQ(log.command->onnx, "bert.onnx");
    EXPECT_EQ(precision_label(*log.command), "int8");
    EXPECT_EQ(log.command->batch, 8);
    EXPECT_EQ(log.command->device, 1);
    EXPECT_EQ(log.queries, 2500);
    EXPECT_EQ(log.measured_queries(), 2500);  // the printed count wins over qps x walltime
    EXPECT_EQ(log.statistics.at("gpu_compute").percentile(99.9), 1.9);
    EXPECT_TRUE(log.warnings.empty()) << "[W] lines without '* ' are not performance warnings";
    EXPECT_EQ(log.passed, false);
    const auto metrics = log_metrics(log);
    EXPECT_TRUE(std::any_of(metrics.begin(), metrics.end(),
                            [](const LogMetric& m) { return m.name == "gpu_compute_p99.9_ms" && m.value == 1.9; }));
}

TEST(TrtexecLog, OlderTraceLineLayoutsAndStatisticSeparators) {
    // One trace layout per log (a line with other times than the first is a cut one): TensorRT 5 and 6...
    const TrtexecLog old_trace = parse_trtexec_log(
        "[I] Average over 10 runs is 0.95 ms (host walltime is 1.02 ms, 99% percentile time is 1.2).\n");
    EXPECT_THAT(old_trace.trace_averages_ms.at("average_ms"), ElementsAre(0.95));
    EXPECT_THAT(old_trace.trace_averages_ms.at("host_walltime_ms"), ElementsAre(1.02));
    EXPECT_TRUE(old_trace.rejected_lines.empty());
    // ... and TensorRT 7 to 10.
    const TrtexecLog log = parse_trtexec_log(
        "[I] Average on 10 runs - GPU latency: 5e-05 ms - Host latency: 0.5 ms (end to end 1 ms, enqueue 0.25 ms)\n"
        "[I] Host Latency: min: 1.5 ms, max: 2.5 ms, mean: 2 ms, median: 1.9 ms, percentile(99%): 2.4 ms\n"
        "[I] GPU Compute: min: 1.2 ms, max: 2.2 ms, mean: 1.7 ms, median: 1.6 ms, percentile: 2.1 ms at 99%\n");
    EXPECT_THAT(log.trace_averages_ms.at("gpu_latency_ms"), ElementsAre(5e-05));
    EXPECT_THAT(log.trace_averages_ms.at("end_to_end_ms"), ElementsAre(1.0));
    expect_statistic(log, "host_latency", 1.5, 2.5, 2.0, 1.9);
    EXPECT_EQ(log.statistics.at("host_latency").percentile(99), 2.4);
    expect_statistic(log, "gpu_compute", 1.2, 2.2, 1.7, 1.6);
    EXPECT_EQ(log.statistics.at("gpu_compute").percentile(99), 2.1);
    EXPECT_TRUE(log.rejected_lines.empty());
    EXPECT_FALSE(log.throughput_qps);
}

// The real TensorRT 10 log cut at every line of its performance summary, and inside each line: no cut
// passes for a whole summary (the import refuses what this finds).
TEST(TrtexecLog, ALogCutInsideItsSummaryIsNeverWhole) {
    const std::string whole = fixture("trt10-resnet50-summary.log");
    const TrtexecLog complete = parse_trtexec_log(whole);
    EXPECT_TRUE(complete.missing_from_summary().empty());
    EXPECT_TRUE(complete.rejected_lines.empty()) << complete.rejected_lines.front();
    const auto begin = whole.find("=== Performance summary ===");
    const auto end = whole.find('\n', whole.find("GPU Compute Time: "));
    ASSERT_NE(begin, std::string::npos);
    int cuts = 0;
    for (auto at = begin; at < end; at += 7, ++cuts) {
        const TrtexecLog cut = parse_trtexec_log(whole.substr(0, at));
        EXPECT_TRUE(!cut.missing_from_summary().empty() || !cut.rejected_lines.empty())
            << "cut at byte " << at << ": ..." << whole.substr(at > 60 ? at - 60 : 0, std::min<std::size_t>(at, 60));
    }
    EXPECT_GT(cuts, 100);
    EXPECT_THAT(parse_trtexec_log(whole.substr(0, whole.find("Latency: min"))).missing_from_summary(),
                ElementsAre("no 'Latency: min = ...' line", "no 'GPU Compute Time: min = ...' line"));
    const auto mid_line = parse_trtexec_log(whole.substr(0, whole.find(", mean = 1.48372")));
    ASSERT_EQ(mid_line.rejected_lines.size(), 1u);
    EXPECT_THAT(mid_line.rejected_lines[0],
                ::testing::StartsWith("line 5: cut short (every trtexec prints min, max, mean, median and a "
                                      "percentile): 'Latency: min = 1.4209 ms, max = 3.047 ms'"));
    const auto mid_item = parse_trtexec_log(whole.substr(0, whole.find("3.047 ms") + 4));
    ASSERT_EQ(mid_item.rejected_lines.size(), 1u);
    EXPECT_EQ(mid_item.rejected_lines[0], "line 5: 'max = 3.04' cannot be read (cut short?): "
                                          "'Latency: min = 1.4209 ms, max = 3.04'");
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
}

TEST(TrtexecLog, FiguresNoMeasurementHasAreRejectedNamingTheLine) {
    const std::string whole = fixture("trt10-resnet50-summary.log");
    const auto rejected = [&](const std::string& from, const std::string& to) {
        const TrtexecLog log = parse_trtexec_log(replaced(whole, from, to));
        return log.rejected_lines.empty() ? std::string("nothing rejected") : log.rejected_lines.front();
    };
    EXPECT_THAT(rejected("mean = 1.48372 ms", "mean = -1e308 ms"),
                ::testing::StartsWith("line 5: mean = -1e+308 ms is not a possible time: 'Latency: min = 1.4209 ms"));
    EXPECT_THAT(rejected("mean = 1.44357 ms", "mean = 1e308 s"),
                ::testing::StartsWith("line 8: mean = inf ms is not a possible time: 'GPU Compute Time: min"));
    EXPECT_THAT(rejected("min = 1.4209 ms", "min = 4 ms"), ::testing::StartsWith("line 5: min = 4 ms is above max"));
    EXPECT_THAT(rejected("percentile(99%) = 2.61597 ms", "percentile(99%) = 9 ms"),
                ::testing::StartsWith("line 5: p99 = 9 ms lies outside min .. max (1.4209 .. 3.047 ms)"));
    EXPECT_THAT(rejected("Throughput: 691.435 qps", "Throughput: -691.435 qps"),
                ::testing::StartsWith("line 4: -691.435 qps is not possible (negative)"));
    EXPECT_THAT(rejected("Total Host Walltime: 3.0039 s", "Total Host Walltime: -3 s"),
                ::testing::StartsWith("line 10: -3 s is not possible (negative)"));
    const TrtexecLog log = parse_trtexec_log(replaced(whole, "mean = 1.48372 ms", "mean = -1e308 ms"));
    EXPECT_FALSE(log.statistics.contains("host_latency")) << "a rejected line's figures are left out";
    for (const auto& metric : log_metrics(log)) EXPECT_TRUE(std::isfinite(metric.value)) << metric.name;
}

// The "Average on N runs" trace lines are measurements too: a time no measurement has, a line cut short
// anywhere (inside a number, after a whole piece, before its parenthesis closes) is rejected, naming it.
TEST(TrtexecLog, TraceLinesWithImpossibleOrCutTimesAreRejected) {
    const std::string whole = fixture("trt8-tf32-trace-3050.log");
    ASSERT_TRUE(parse_trtexec_log(whole).rejected_lines.empty());
    const auto rejected = [&](const std::string& from, const std::string& to) {
        const TrtexecLog log = parse_trtexec_log(replaced(whole, from, to));
        return log.rejected_lines.empty() ? std::string("nothing rejected") : log.rejected_lines.front();
    };
    EXPECT_THAT(rejected("GPU latency: 33.5586 ms", "GPU latency: -33.5586 ms"),
                ::testing::StartsWith("line 4: gpu_latency_ms = -33.5586 ms is not a possible time: 'Average on"));
    EXPECT_THAT(rejected("GPU latency: 33.5586 ms", "GPU latency: 1e308 ms"),
                ::testing::StartsWith("line 4: gpu_latency_ms = 1e+308 ms is not a possible time"));
    EXPECT_THAT(rejected("enqueue 34.35 ms", "enqueue inf ms"),
                ::testing::StartsWith("line 4: enqueue_ms 'inf' is not a number"));
    EXPECT_THAT(rejected("Average on 10 runs - GPU latency: 33.5586", "Average on -10 runs - GPU latency: 33.5586"),
                ::testing::StartsWith("line 4: '-10' is not a possible run count"));
    // Line 4 cut inside a number, after its host latency, and inside the parenthesis: the rest of the
    // log follows on the next line, as when two writers interleave.
    const auto line4 = whole.find("[05/29/2022-21:55:54] [I] Average on 10 runs - GPU latency: 33.5586");
    const auto line5 = whole.find('\n', line4) + 1;
    for (const std::string cut_after : {"GPU latency: 33.55", "Host latency: 34.8392 ms", "(end to end 34.8435 ms",
                                        "enqueue 34.35"}) {
        const auto at = whole.find(cut_after, line4) + cut_after.size();
        const TrtexecLog log = parse_trtexec_log(whole.substr(0, at) + "\n" + whole.substr(line5));
        ASSERT_FALSE(log.rejected_lines.empty()) << cut_after;
        EXPECT_THAT(log.rejected_lines.front(), ::testing::StartsWith("line 4: ")) << cut_after;
        EXPECT_EQ(log.trace_averages_ms.at("gpu_latency_ms").size(), parse_trtexec_log(whole).trace_averages_ms.at("gpu_latency_ms").size() - 1)
            << "a rejected line's figures are left out";
    }
}

TEST(TrtexecLog, NotATrtexecLog) {
    const TrtexecLog log = parse_trtexec_log("hello\nworld: min = 3\n\n");
    EXPECT_FALSE(log.has_performance_summary());
    EXPECT_FALSE(log.measured_queries());
    EXPECT_TRUE(log_metrics(log).empty());
}

TEST(TrtexecLog, VersionEncodings) {
    EXPECT_EQ(find_tensorrt_version("&&&& RUNNING TensorRT.trtexec [TensorRT v100900] [b34] # trtexec --help\n"),
              "10.9.0");
    EXPECT_EQ(find_tensorrt_version("&&&& RUNNING TensorRT.trtexec [TensorRT v8205] # trtexec\n"), "8.2.5");
    EXPECT_EQ(find_tensorrt_version("[I] TensorRT version: 8.6.1\r\n"), "8.6.1");
    EXPECT_EQ(find_tensorrt_version("no version here"), "");
}

TEST(TrtexecLog, CommandFlags) {
    const auto batch_of = [](const char* text) { return parse_trtexec_command(text).batch; };
    EXPECT_EQ(batch_of("trtexec --onnx=m.onnx --batch=16 --shapes=x:8x3x224x224"), 16);
    EXPECT_EQ(batch_of("trtexec --onnx=m.onnx --optShapes=x:4x3 --shapes=x:8x3x224x224"), 8);
    EXPECT_EQ(batch_of("trtexec --onnx=m.onnx --optShapes='in:0':4x3"), 4);
    EXPECT_EQ(batch_of("trtexec --onnx=m.onnx"), std::nullopt);
    EXPECT_EQ(precision_label(parse_trtexec_command("trtexec --onnx=m.onnx --fp16 --best")), "best");
    EXPECT_EQ(precision_label(parse_trtexec_command("trtexec --onnx=m.onnx --fp16")), "fp16");
    EXPECT_EQ(precision_label(parse_trtexec_command("trtexec --onnx=m.onnx --bf16")), "bf16");
    EXPECT_EQ(precision_label(parse_trtexec_command("trtexec --onnx=m.onnx --fp16 --fp8")), "fp8");
    const LogCommand strict = parse_trtexec_command("trtexec --loadEngine=m.plan --noTF32");
    EXPECT_TRUE(strict.no_tf32);
    EXPECT_EQ(strict.load_engine, "m.plan");
    EXPECT_EQ(precision_label(strict), "fp32");
}

}  // namespace
}  // namespace inferbench::trtexec
