// The trtexec log parser on TensorRT 11's lines, read from stand-in logs (tests/data/trtexec-standins: written
// from trtexec 11.1's source, not run), and the flags trtexec 11 removed (backends/trtexec/trtexec_version).
#include "backends/trtexec/trtexec_log.hpp"
#include "backends/trtexec/trtexec_version.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>

#include "core/metrics/trtexec_metrics.hpp"

namespace inferbench::trtexec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string standin(const std::string& name) {
    std::ifstream in(std::string(INFERBENCH_STANDINS_DIR) + "/" + name, std::ios::binary);
    EXPECT_TRUE(in) << name;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string real_log(const std::string& name) {
    std::ifstream in(std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/" + name, std::ios::binary);
    EXPECT_TRUE(in) << name;
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool has_metric(const std::vector<LogMetric>& metrics, std::string_view name) {
    return std::ranges::any_of(metrics, [&](const LogMetric& m) { return m.name == name; });
}

TEST(TrtexecLog11, StronglyTypedBuildWithTrtexecsDefaults) {
    const TrtexecLog log = parse_trtexec_log(standin("trt11-strongly-typed-summary.log"));
    EXPECT_EQ(log.tensorrt_version, "11.1.0");
    EXPECT_EQ(log.build_precision, "Strongly Typed");
    EXPECT_TRUE(log.strongly_typed());
    EXPECT_EQ(precision_label(log), kStronglyTypedLabel) << "the ONNX file's types, which the log does not state";
    EXPECT_EQ(log.data_transfers, false);
    EXPECT_EQ(log.cuda_graph, true);
    EXPECT_EQ(log.spin_wait, true);
    EXPECT_EQ(log.gpu_name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(log.performance_summaries, 1);
    EXPECT_FALSE(log.tuning);
    EXPECT_TRUE(log.unknown_options.empty());
    EXPECT_TRUE(log.rejected_lines.empty());
    EXPECT_TRUE(log.missing_from_summary().empty());
    EXPECT_EQ(log.passed, true);
    ASSERT_TRUE(log.command);
    EXPECT_EQ(log.command->onnx, "resnet50/model_fp16.onnx");
    EXPECT_TRUE(log.command->removed_flags.empty());
    EXPECT_DOUBLE_EQ(log.throughput_qps.value_or(0), 1951.2);
    EXPECT_DOUBLE_EQ(log.statistics.at(std::string(trtexec_metrics::kGpuCompute)).median_ms, 0.509);
    EXPECT_THAT(log.trace_averages_ms.at("gpu_latency_ms"), ElementsAre(0.512, 0.508));
    // Data transfers off: the H2D and D2H lines are zeros nothing measured, so they are no figures.
    const auto metrics = log_metrics(log);
    EXPECT_FALSE(has_metric(metrics, "h2d_mean_ms"));
    EXPECT_FALSE(has_metric(metrics, "d2h_p99_ms"));
    EXPECT_TRUE(has_metric(metrics, "gpu_compute_p99_ms"));
    EXPECT_TRUE(has_metric(metrics, "host_latency_mean_ms"));
}

TEST(TrtexecLog11, RunWithDataTransfersKeepsThem) {
    const TrtexecLog log = parse_trtexec_log(standin("trt11-transfers-summary.log"));
    EXPECT_EQ(log.data_transfers, true);
    EXPECT_EQ(log.cuda_graph, false);
    EXPECT_TRUE(log.strongly_typed());
    ASSERT_TRUE(log.command);
    EXPECT_EQ(log.command->load_engine, "resnet50/model.plan");
    const auto metrics = log_metrics(log);
    EXPECT_TRUE(has_metric(metrics, "h2d_mean_ms"));
    EXPECT_TRUE(has_metric(metrics, "d2h_mean_ms"));
}

TEST(TrtexecLog11, ARemovedFlagIsReadAsTrtexecRefusedIt) {
    const TrtexecLog log = parse_trtexec_log(standin("trt11-removed-fp16.log"));
    EXPECT_EQ(log.tensorrt_version, "11.1.0");
    EXPECT_THAT(log.unknown_options, ElementsAre("--fp16"));
    ASSERT_TRUE(log.command);
    EXPECT_THAT(log.command->removed_flags, ElementsAre("--fp16"));
    EXPECT_TRUE(log.command->fp16) << "the command line asked for it";
    EXPECT_FALSE(log.has_performance_summary());
    EXPECT_EQ(precision_label(log), kStronglyTypedLabel) << "never fp16: trtexec 11 built nothing with --fp16";
    EXPECT_EQ(log.passed, std::nullopt) << "trtexec 11 exits 1 after the error, without a FAILED line";
}

TEST(TrtexecLog11, TuningLoopIterationsAreCountedNotMerged) {
    const TrtexecLog log = parse_trtexec_log(standin("trt11-tuning-loop.log"));
    ASSERT_TRUE(log.tuning);
    EXPECT_EQ(log.tuning->iterations_begun, 2);
    EXPECT_EQ(log.tuning->iterations_ended, 2);
    EXPECT_EQ(log.tuning->iterations_aborted, 0);
    EXPECT_EQ(log.tuning->best_route, "-conv_use_long_w=on");
    EXPECT_DOUBLE_EQ(log.tuning->best_gpu_time_ms.value_or(0), 0.511);
    EXPECT_EQ(log.performance_summaries, 2) << "one per child trtexec";
    ASSERT_TRUE(log.command);
    EXPECT_THAT(log.command->text, HasSubstr("--tuneBuildRoutes=")) << "the parent's command line, printed first";
}

TEST(TrtexecLog11, OlderLogsReadAsBefore) {
    const TrtexecLog trt10 = parse_trtexec_log(real_log("trt10-resnet50-summary.log"));
    EXPECT_FALSE(trt10.strongly_typed());
    EXPECT_EQ(precision_label(trt10), "fp32");
    EXPECT_EQ(trt10.performance_summaries, 1);
    EXPECT_FALSE(trt10.data_transfers) << "the excerpt prints no settings: not known, so H2D and D2H are kept";
    EXPECT_TRUE(has_metric(log_metrics(trt10), "h2d_mean_ms"));
    const TrtexecLog trt8 = parse_trtexec_log(real_log("trt8-tf32-trace-3050.log"));
    EXPECT_FALSE(trt8.strongly_typed());
    EXPECT_TRUE(has_metric(log_metrics(trt8), "d2h_mean_ms"));
}

TEST(TrtexecLog11, TensorRt10SettingsLines) {
    const TrtexecLog log = parse_trtexec_log(
        "&&&& RUNNING TensorRT.trtexec [TensorRT v101300] [b6] # trtexec --onnx=m.onnx --fp16 --noDataTransfers\n"
        "[I] Precision: FP32+FP16\n[I] Data transfers: Disabled\n[I] Spin-wait: Disabled\n[I] CUDA Graph: Disabled\n");
    EXPECT_EQ(log.build_precision, "FP32+FP16");
    EXPECT_FALSE(log.strongly_typed());
    EXPECT_EQ(precision_label(log), "fp16");
    EXPECT_EQ(log.data_transfers, false);
    EXPECT_EQ(log.spin_wait, false);
    EXPECT_THAT(log.command->removed_flags, ElementsAre("--fp16")) << "removed in 11, valid in 10";
    const TrtexecLog typed10 = parse_trtexec_log(
        "&&&& RUNNING TensorRT.trtexec [TensorRT v101300] [b6] # trtexec --onnx=m.onnx --stronglyTyped\n");
    EXPECT_TRUE(typed10.command->strongly_typed);
    EXPECT_TRUE(typed10.strongly_typed());
}

TEST(TrtexecLog11, AnUnknownOptionOnlyCountsAsAnError) {
    const TrtexecLog log = parse_trtexec_log("[I] Unknown option: --fp16 \n[E] Unknown option: --int8 \n");
    EXPECT_THAT(log.unknown_options, ElementsAre("--int8"));
}

TEST(TrtexecVersion, RemovedFlags) {
    EXPECT_EQ(flags_removed_in_11().size(), 7u);
    EXPECT_EQ(removed_flag("--calib=cache.bin"), "--calib");
    EXPECT_EQ(removed_flag("--best"), "--best");
    EXPECT_EQ(removed_flag("--fp16x"), std::nullopt);
    EXPECT_EQ(removed_flag("--noTF32"), std::nullopt);
    EXPECT_EQ(removed_flag("--stronglyTyped"), std::nullopt) << "a no-op in 11, not removed";
    EXPECT_THAT(removed_flags({"--useCudaGraph", "--int8", "--calib=c.bin"}), ElementsAre("--int8", "--calib"));
    EXPECT_EQ(removed_flag_reason("--fp16"),
              "--fp16 was removed in TensorRT 11 (every network is strongly typed: the precision comes from the ONNX "
              "file's types)");
    EXPECT_THAT(removed_flag_reason("--calib"), HasSubstr("Q/DQ nodes"));
}

}  // namespace
}  // namespace inferbench::trtexec
