// The trtexec command lines: every precision, static and dynamic shapes, the run's flags.
#include "backends/trtexec/trtexec_command.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace inferbench::trtexec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

EngineBuild dynamic_build(Precision precision) {
    EngineBuild build;
    build.trtexec = "/opt/trt/bin/trtexec";
    build.onnx_path = "/m/resnet50.onnx";
    build.engine_path = "/c/e.engine";
    build.timing_cache_path = "/c/timing.cache";
    build.precision = precision;
    build.batch_size = 8;
    build.inputs = {{"input", 1, {-1, 3, 224, 224}}};
    build.device = 1;
    build.tensorrt_version = "10.9.0";
    return build;
}

std::vector<std::string> expected_build(std::initializer_list<const char*> precision_flags) {
    std::vector<std::string> argv = {"/opt/trt/bin/trtexec", "--onnx=/m/resnet50.onnx", "--saveEngine=/c/e.engine"};
    argv.insert(argv.end(), precision_flags.begin(), precision_flags.end());
    for (const char* flag : {"--minShapes=", "--optShapes=", "--maxShapes="})
        argv.push_back(std::string(flag) + "input:8x3x224x224");
    argv.insert(argv.end(), {"--timingCacheFile=/c/timing.cache", "--device=1", "--skipInference"});
    return argv;
}

TEST(TrtexecCommand, Fp32IsStrictFp32) {
    const CommandLine command = engine_build_command(dynamic_build(Precision::fp32));
    EXPECT_EQ(command.argv, expected_build({"--noTF32"}));
    EXPECT_THAT(command.notes, ElementsAre(HasSubstr("--noTF32")));
}

TEST(TrtexecCommand, Fp16Bf16Fp8Flags) {
    EXPECT_EQ(engine_build_command(dynamic_build(Precision::fp16)).argv, expected_build({"--fp16"}));
    EXPECT_EQ(engine_build_command(dynamic_build(Precision::bf16)).argv, expected_build({"--bf16"}));
    EXPECT_EQ(engine_build_command(dynamic_build(Precision::fp8)).argv, expected_build({"--fp8"}));
    EXPECT_TRUE(engine_build_command(dynamic_build(Precision::fp16)).notes.empty());
}

TEST(TrtexecCommand, Int8WithoutCalibrationSaysTheScalesAreRandom) {
    const CommandLine command = engine_build_command(dynamic_build(Precision::int8));
    EXPECT_EQ(command.argv, expected_build({"--int8"}));
    EXPECT_THAT(command.notes, ElementsAre(HasSubstr("random dynamic ranges")));

    EngineBuild calibrated = dynamic_build(Precision::int8);
    calibrated.extra_args = {"--calib=/c/calib.cache"};
    const CommandLine with_cache = engine_build_command(calibrated);
    EXPECT_TRUE(with_cache.notes.empty());
    EXPECT_EQ(with_cache.argv.back(), "--calib=/c/calib.cache");
}

TEST(TrtexecCommand, StaticModelGetsNoShapes) {
    EngineBuild build = dynamic_build(Precision::fp16);
    build.batch_size = 1;
    build.inputs = {{"input", 1, {1, 3, 224, 224}}};
    EXPECT_EQ(engine_build_command(build).argv,
              (std::vector<std::string>{"/opt/trt/bin/trtexec", "--onnx=/m/resnet50.onnx", "--saveEngine=/c/e.engine",
                                        "--fp16", "--timingCacheFile=/c/timing.cache", "--device=1",
                                        "--skipInference"}));
}

TEST(TrtexecCommand, OlderTensorRtBuildsWithBuildOnly) {
    EngineBuild build = dynamic_build(Precision::fp16);
    build.tensorrt_version = "8.2.5";
    EXPECT_EQ(engine_build_command(build).argv.back(), "--buildOnly");
    build.tensorrt_version = "8.4.1";
    EXPECT_EQ(engine_build_command(build).argv.back(), "--skipInference");
    build.tensorrt_version = "unknown";
    EXPECT_EQ(engine_build_command(build).argv.back(), "--skipInference");
}

TEST(TrtexecCommand, OwnShapesInExtraArgsReplaceTheProfile) {
    EngineBuild build = dynamic_build(Precision::fp16);
    build.inputs = {{"ids", 7, {-1, -1}}};  // a sequence length this backend cannot choose
    build.extra_args = {"--minShapes=ids:1x16", "--optShapes=ids:8x128", "--maxShapes=ids:8x512"};
    const auto argv = engine_build_command(build).argv;
    EXPECT_EQ(std::count_if(argv.begin(), argv.end(), [](const std::string& a) { return a.starts_with("--minShapes"); }),
              1);
    EXPECT_EQ(argv.back(), "--maxShapes=ids:8x512");
}

TEST(TrtexecCommand, ShapesForSeveralInputs) {
    const std::vector<OnnxInput> inputs = {
        {"input_ids", 7, {-1, 128}}, {"attention:mask", 7, {-1, 128}}, {"scale", 1, {}}};
    EXPECT_EQ(shapes_for_batch(inputs, 4, "m.onnx"), "input_ids:4x128,'attention:mask':4x128");
}

TEST(TrtexecCommand, ShapesThatCannotBeBuilt) {
    try {
        shapes_for_batch({{"input", 1, {1, 3, 224, 224}}}, 8, "m.onnx");
        FAIL() << "a fixed batch of 1 cannot run batch 8";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(),
                    HasSubstr("input input of model m.onnx has a fixed batch size of 1; to run batch size 8"));
    }
    try {
        shapes_for_batch({{"ids", 7, {-1, -1}}}, 8, "m.onnx");
        FAIL() << "a dynamic sequence length has no value to give";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("input ids of model m.onnx has a dynamic dimension 1;"));
        EXPECT_THAT(e.what(), HasSubstr("or give every shape in backend_options.trtexec.extra_args"));
    }
    EXPECT_EQ(shapes_for_batch({{"input", 1, {4, 3}}}, 4, "m.onnx"), "");
    EXPECT_EQ(shapes_for_batch({}, 4, "m.onnx"), "");
}

TEST(TrtexecCommand, RunCommand) {
    EngineRun run;
    run.trtexec = "trtexec";
    run.engine_path = "/c/e.engine";
    run.export_times_path = "/tmp/x/times.json";
    run.warmup_ns = 1'500'000'000;
    run.duration_ns = 250'000'000;
    run.iterations = 10;
    run.shapes = "input:8x3x224x224";
    run.device = 0;
    EXPECT_THAT(engine_run_command(run),
                ElementsAre("trtexec", "--loadEngine=/c/e.engine", "--warmUp=1500", "--duration=0.25",
                            "--iterations=10", "--exportTimes=/tmp/x/times.json", "--shapes=input:8x3x224x224",
                            "--device=0", "--useSpinWait"));
    run.shapes.clear();
    run.warmup_ns = 0;
    run.duration_ns = 5'000'000'000;
    run.iterations = 0;  // trtexec needs at least one
    run.extra_args = {"--useCudaGraph"};
    EXPECT_THAT(engine_run_command(run),
                ElementsAre("trtexec", "--loadEngine=/c/e.engine", "--warmUp=0", "--duration=5", "--iterations=1",
                            "--exportTimes=/tmp/x/times.json", "--device=0", "--useSpinWait", "--useCudaGraph"));
}

TEST(TrtexecCommand, RunCommandLoadsTheInputFilesOnePerInput) {
    EngineRun run;
    run.trtexec = "trtexec";
    run.engine_path = "/c/e.engine";
    run.export_times_path = "/tmp/x/times.json";
    run.extra_args = {"--useCudaGraph"};
    run.input_files = {{"image", "/tmp/x/input0.bin"}, {"ids:0", "/tmp/x/input1.bin"}};
    EXPECT_THAT(engine_run_command(run),
                ElementsAre("trtexec", "--loadEngine=/c/e.engine", "--warmUp=0", "--duration=0", "--iterations=1",
                            "--exportTimes=/tmp/x/times.json",
                            "--loadInputs=image:/tmp/x/input0.bin,'ids:0':/tmp/x/input1.bin", "--device=0",
                            "--useSpinWait", "--useCudaGraph"));
    run.input_files = {{"image", "/tmp/a,b/input0.bin"}};
    EXPECT_THROW(engine_run_command(run), std::invalid_argument) << "trtexec would split the path at the comma";
}

TEST(TrtexecCommand, TensorRt11BuildsTheTypedFileWithoutPrecisionFlags) {
    for (const Precision precision : {Precision::fp16, Precision::bf16, Precision::int8, Precision::fp8}) {
        EngineBuild build = dynamic_build(precision);
        build.tensorrt_version = "11.1.0";
        build.onnx_path = "/m/resnet50.onnx";  // as the caller passes the typed file
        const CommandLine command = engine_build_command(build);
        EXPECT_EQ(command.argv, expected_build({})) << to_string(precision) << ": no flag, no --stronglyTyped (always on)";
        EXPECT_TRUE(command.notes.empty()) << "no random int8 ranges: the scales are the file's Q/DQ nodes'";
    }
    EngineBuild fp32 = dynamic_build(Precision::fp32);
    fp32.tensorrt_version = "11.0.0";
    EXPECT_EQ(engine_build_command(fp32).argv, expected_build({"--noTF32"})) << "trtexec 11 still takes --noTF32";
}

TEST(TrtexecCommand, TensorRt11RefusesARemovedFlagInExtraArgsInOneLine) {
    EngineBuild build = dynamic_build(Precision::int8);
    build.tensorrt_version = "11.1.0";
    build.extra_args = {"--useCudaGraph", "--calib=/c/calib.cache"};
    EXPECT_THAT([&] { engine_build_command(build); },
                ::testing::ThrowsMessage<UserError>(
                    "backend_options.trtexec.extra_args holds --calib, which trtexec 11.1.0 refuses: --calib was removed "
                    "in TensorRT 11 (every network is strongly typed: the precision comes from the ONNX file's Q/DQ "
                    "nodes); remove it"));
    build.tensorrt_version = "10.9.0";
    EXPECT_EQ(engine_build_command(build).argv.back(), "--calib=/c/calib.cache") << "10 takes it";
}

TEST(TrtexecCommand, TensorRt11RunMeasuresAsTensorRt10Does) {
    EngineRun run;
    run.trtexec = "trtexec";
    run.engine_path = "/c/e.engine";
    run.export_times_path = "/t/times.json";
    run.warmup_ns = 200'000'000;
    run.duration_ns = 3'000'000'000;
    run.tensorrt_version = "11.1.0";
    EXPECT_THAT(engine_run_command(run),
                ElementsAre("trtexec", "--loadEngine=/c/e.engine", "--warmUp=200", "--duration=3", "--iterations=1",
                            "--exportTimes=/t/times.json", "--device=0", "--includeDataTransfers", "--noCudaGraph"));
    run.extra_args = {"--useCudaGraph"};
    const auto with_graph = engine_run_command(run);
    EXPECT_THAT(with_graph, ::testing::Not(::testing::Contains("--noCudaGraph"))) << "the user asked for graphs";
    EXPECT_EQ(with_graph.back(), "--useCudaGraph");
    run.extra_args = {"--noDataTransfers"};
    EXPECT_THAT(engine_run_command(run), ::testing::Contains("--includeDataTransfers"));
    run.extra_args = {};
    run.tensorrt_version = "10.16.1";
    EXPECT_EQ(engine_run_command(run).back(), "--useSpinWait") << "10: as before";
    EXPECT_THAT(engine_run_command(run), ::testing::Not(::testing::Contains("--noCudaGraph")));
}

TEST(TrtexecCommand, StronglyTypedOnly) {
    EXPECT_TRUE(strongly_typed_only("11.0.0"));
    EXPECT_TRUE(strongly_typed_only("11.1.0.106"));
    EXPECT_FALSE(strongly_typed_only("10.16.1"));
    EXPECT_FALSE(strongly_typed_only("unknown"));
    EXPECT_FALSE(strongly_typed_only(""));
}

TEST(TrtexecCommand, HasFlag) {
    const std::vector<std::string> args = {"--calib=x", "--useCudaGraph", "--shapesX=1"};
    EXPECT_TRUE(has_flag(args, "--calib"));
    EXPECT_TRUE(has_flag(args, "--useCudaGraph"));
    EXPECT_FALSE(has_flag(args, "--shapes"));
    EXPECT_FALSE(has_flag(args, "--useCuda"));
}

}  // namespace
}  // namespace inferbench::trtexec
