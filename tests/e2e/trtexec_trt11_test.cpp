// The trtexec backend through the real CLI with a stand-in TensorRT 11 trtexec (no TensorRT here): `list
// backends` shows its version, an fp16 cell is built from inferbench's fp16 file without --fp16 and stores
// the version, an int8 cell without a quantized file is skipped with the reason, a TensorRT 12 is one line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e/cli_harness.hpp"
#include "models/onnx_builder.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// As trtexec 11.1's source behaves (tests/data/trtexec-standins/README.md): the banner first, a removed
// precision flag refused with "[E] Unknown option: KEY VALUE" and exit 1, an engine for --saveEngine, else a
// run that writes its --exportTimes file and prints a stand-in 11 log.
std::string stand_in(const std::string& version) {
    return "#!/bin/sh\necho \"$*\" >> calls.txt\nengine=; times=\n"
           "echo \"&&&& RUNNING TensorRT.trtexec [TensorRT v" + version + "] [b106] # trtexec $*\"\n"
           "for arg in \"$@\"; do key=${arg%%=*}; case \"$key\" in\n"
           "  --help) exit 0 ;;\n"
           "  --fp16|--bf16|--int8|--fp8|--int4|--best|--calib) echo \"[E] Unknown option: $key \"; exit 1 ;;\n"
           "  --saveEngine) engine=${arg#--saveEngine=} ;;\n"
           "  --exportTimes) times=${arg#--exportTimes=} ;;\n"
           "esac; done\n"
           "if [ -n \"$engine\" ]; then echo engine > \"$engine\"; exit 0; fi\n"
           "cat > \"$times\" <<'JSON'\n"
           "[ { \"startEnqMs\" : 1, \"endEnqMs\" : 1.1, \"startH2dMs\" : 1, \"endH2dMs\" : 1.1, \"startComputeMs\" : 1.1, "
           "\"endComputeMs\" : 1.5, \"startD2hMs\" : 1.5, \"endD2hMs\" : 1.6, \"h2dMs\" : 0.1, \"computeMs\" : 0.4, "
           "\"d2hMs\" : 0.1, \"latencyMs\" : 0.6 } ]\nJSON\n"
           "cat '" INFERBENCH_STANDINS_DIR "/trt11-transfers-summary.log'\n";
}

class TrtexecTrt11Cli : public ::testing::Test {
protected:
    void SetUp() override {
        models::GraphBuilder graph("relu", 1);
        graph.add_input("x", models::OnnxElemType::float32,
                        {models::OnnxDim::symbolic("batch"), models::OnnxDim::fixed(4)});
        graph.add_node({"Relu", "relu", {"x"}, {"y"}, {}});
        graph.add_output("y", models::OnnxElemType::float32, {});
        dir_.write("m.onnx", graph.serialize());
        std::filesystem::create_directories(dir_.path() / "bin");
        install("bin/trtexec", stand_in("110100"));
        install("bin/nvidia-smi", "#!/bin/sh\necho 'NVIDIA H100 80GB HBM3'\n");
    }
    void install(const std::string& name, const std::string& text) {
        dir_.write(name, text);
        std::filesystem::permissions(dir_.path() / name, std::filesystem::perms::owner_all);
    }
    std::string env() const { return "env PATH=" + (dir_.path() / "bin").string() + ":/usr/bin:/bin"; }

    testing::CliScratch dir_;
};

TEST_F(TrtexecTrt11Cli, Fp16IsBuiltFromTheTypedFileAndInt8IsSkippedWithTheReason) {
    const auto listed = dir_.run("list backends --columns name,version", env());
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_THAT(listed.out, HasSubstr("11.1.0"));

    const auto r = dir_.run("run --backend trtexec --device cuda --model m.onnx --batch 2 --precision fp16,int8 "
                            "--duration 20ms --warmup 0s --db r.db",
                            env());
    const auto results = store::ResultsStore::open(dir_.file("r.db"));
    const auto benchmarks = results.benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u) << r.err;
    const auto& fp16 = benchmarks[0].precision == "fp16" ? benchmarks[0] : benchmarks[1];
    const auto& int8 = benchmarks[0].precision == "fp16" ? benchmarks[1] : benchmarks[0];
    EXPECT_EQ(fp16.status, BenchmarkStatus::ok) << fp16.reason;
    EXPECT_EQ(fp16.backend_version, "11.1.0");
    EXPECT_EQ(int8.status, BenchmarkStatus::skipped);
    EXPECT_THAT(int8.reason, HasSubstr("trtexec 11.1.0: int8 on TensorRT 11 needs a Q/DQ file"));
    const std::string calls = testing::read_file(dir_.path() / "calls.txt");
    EXPECT_THAT(calls, Not(HasSubstr("--fp16")));
    EXPECT_THAT(calls, Not(HasSubstr("--int8")));
    EXPECT_THAT(calls, HasSubstr("/converted/m.fp16."));
    EXPECT_THAT(calls, HasSubstr("--includeDataTransfers --noCudaGraph"));
}

TEST_F(TrtexecTrt11Cli, ANewerTensorRtIsOneLineAndBuildsNothing) {
    install("bin/trtexec", stand_in("120000"));
    const auto r = dir_.run("run --backend trtexec --device cuda --model m.onnx --batch 2 --precision fp16 "
                            "--duration 20ms --warmup 0s --db r.db",
                            env());
    const auto results = store::ResultsStore::open(dir_.file("r.db"));
    const auto benchmarks = results.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u) << r.err;
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::skipped);
    EXPECT_THAT(benchmarks[0].reason, HasSubstr("TensorRT 12.0.0 (trtexec at "));
    EXPECT_THAT(benchmarks[0].reason, HasSubstr("is newer than the newest major version this inferbench knows (11.x)"));
    EXPECT_THAT(testing::read_file(dir_.path() / "calls.txt"), Not(HasSubstr("--saveEngine")));
}

}  // namespace
}  // namespace inferbench
