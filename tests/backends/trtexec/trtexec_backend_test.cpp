// The trtexec backend end to end through a fake trtexec: a shell script that records its arguments,
// "builds" an engine file, prints a real trtexec log and writes an --exportTimes file.
#include "backends/trtexec/trtexec_backend.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "backends/registry.hpp"
#include "common/npz_writer.hpp"
#include "common/scratch_dir.hpp"
#include "core/clock.hpp"
#include "core/error.hpp"
#include "core/metrics/harness_metrics.hpp"
#include "core/process/subprocess.hpp"
#include "models/onnx_builder.hpp"

namespace inferbench::trtexec {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

// What the fake trtexec does after its argument loop, besides building engines.
constexpr const char* kMeasure = "cat '" INFERBENCH_FIXTURES_DIR "/trtexec/trt10-resnet50-summary.log'\nwrite_times\n";
// The same for TensorRT 11: a stand-in log written from trtexec 11.1's source (tests/data/trtexec-standins).
constexpr const char* kMeasure11 = "cat '" INFERBENCH_STANDINS_DIR "/trt11-transfers-summary.log'\nwrite_times\n";
constexpr const char* kTrt11 = "110100";
constexpr const char* kRunUntilInterrupted = "trap 'write_times; exit 0' INT\nwhile :; do sleep 0.05; done\n";
constexpr const char* kFail =
    "echo '[E] Error[1]: IRuntime::deserializeCudaEngine: engine plan file is corrupt'\n"
    "echo '&&&& FAILED TensorRT.trtexec [TensorRT v100900] # trtexec'\nexit 1\n";

// Three queries: H2D starts 2 ms apart; end-to-end 1.5, 1.25 and 1 ms.
constexpr const char* kTimes = R"([
  { "startEnqMs" : 199.9, "endEnqMs" : 200.2, "startH2dMs" : 200, "endH2dMs" : 200.1, "startComputeMs" : 200.1, "endComputeMs" : 201.4, "startD2hMs" : 201.4, "endD2hMs" : 201.5, "h2dMs" : 0.1, "computeMs" : 1.3, "d2hMs" : 0.1, "latencyMs" : 1.5 }
, { "startEnqMs" : 201.9, "endEnqMs" : 202.1, "startH2dMs" : 202, "endH2dMs" : 202.05, "startComputeMs" : 202.05, "endComputeMs" : 203.2, "startD2hMs" : 203.2, "endD2hMs" : 203.25, "h2dMs" : 0.05, "computeMs" : 1.15, "d2hMs" : 0.05, "latencyMs" : 1.25 }
, { "startEnqMs" : 203.9, "endEnqMs" : 204.1, "startH2dMs" : 204, "endH2dMs" : 204.05, "startComputeMs" : 204.05, "endComputeMs" : 204.95, "startD2hMs" : 204.95, "endD2hMs" : 205, "h2dMs" : 0.05, "computeMs" : 0.9, "d2hMs" : 0.05, "latencyMs" : 1 }
]
)";

class CollectingSink final : public IterationSink {
public:
    explicit CollectingSink(std::size_t capacity = 1000, std::int64_t stop_at_ns = 0)
        : capacity_(capacity), stop_at_ns_(stop_at_ns) {}
    bool add(const IterationRecord& record) override {
        if (records.size() < capacity_) records.push_back(record);
        return records.size() < capacity_;
    }
    bool stop_requested() const override { return stop_at_ns_ > 0 && monotonic_ns() >= stop_at_ns_; }

    std::vector<IterationRecord> records;

private:
    std::size_t capacity_;
    std::int64_t stop_at_ns_;
};

class TrtexecBackendTest : public ::testing::Test {
protected:
    void SetUp() override {
        const char* path = std::getenv("PATH");
        saved_path_ = path ? path : "";
        std::filesystem::create_directories(bin_);
        write_executable(bin_ / "nvidia-smi", "#!/bin/sh\necho 'NVIDIA H200'\n");
        write_fake_trtexec(bin_ / "trtexec", kMeasure);
        setenv("PATH", (bin_.string() + ":" + saved_path_).c_str(), 1);
        write_model();
    }
    void TearDown() override { setenv("PATH", saved_path_.c_str(), 1); }

    static void write_executable(const std::filesystem::path& path, const std::string& text) {
        std::ofstream(path) << text;
        std::filesystem::permissions(path, std::filesystem::perms::owner_all);
    }

    // The stand-in of trtexec `version` (as its banner encodes it: 100900 is 10.9.0, 110100 is 11.1.0). As trtexec
    // 11.1's source does, 11 prints its banner, then refuses each flag TensorRT 11 removed with "[E] Unknown option:
    // KEY VALUE" and exits 1, accepts --stronglyTyped as a no-op, warns of --useSpinWait and prints "Precision:
    // Strongly Typed"; 10 refuses the flags only 11 knows (--includeDataTransfers, --noCudaGraph) the same way.
    void write_fake_trtexec(const std::filesystem::path& path, const std::string& measure,
                            const std::string& version = "100900") const {
        write_executable(path, "#!/bin/sh\necho \"$*\" >> '" + calls_.string() + "'\nengine=\ntimes=\nrefused=\n"
                               "banner=\"&&&& RUNNING TensorRT.trtexec [TensorRT v" + version + "] [b34] # trtexec $*\"\n"
                               "for arg in \"$@\"; do\n  key=${arg%%=*}; value=; case \"$arg\" in *=*) value=${arg#*=} ;; esac\n"
                               "  case \"$key\" in\n"
                               "    --fp16|--bf16|--int8|--fp8|--int4|--best|--calib) [ " + version + " -ge 110000 ] && "
                               "refused=\"$refused$key $value\n\" ;;\n"
                               "    --includeDataTransfers|--noCudaGraph|--noSpinWait) [ " + version + " -lt 110000 ] && "
                               "refused=\"$refused$key $value\n\" ;;\n"
                               "  esac\ndone\n"
                               "echo \"$banner\"\n"
                               "if [ -n \"$refused\" ]; then echo '=== Build Options ==='; printf '%s' \"$refused\" | "
                               "while IFS= read -r line; do echo \"[E] Unknown option: $line\"; done; exit 1; fi\n"
                               "if [ " + version + " -ge 110000 ]; then echo '[I] Precision: Strongly Typed'; "
                               "case \" $* \" in *' --useSpinWait '*) echo '[W] --useSpinWait is deprecated. Spin wait is "
                               "now enabled by default. Use --noSpinWait to disable spin wait.' ;; esac; fi\n"
                               "for arg in \"$@\"; do\n  case \"$arg\" in\n"
                               "    --help) exit 0 ;;\n"
                               "    --saveEngine=*) engine=${arg#--saveEngine=} ;;\n"
                               "    --exportTimes=*) times=${arg#--exportTimes=} ;;\n"
                               // As trtexec: one NAME:FILE per input, each file read whole; a missing one fails.
                               "    --loadInputs=*) echo \"${arg#--loadInputs=}\" | tr ',' '\\n' | while IFS= read -r "
                               "spec; do file=${spec#*:}; [ -f \"$file\" ] || { echo \"[E] cannot open $file\"; exit 1; }; "
                               "echo \"${spec%%:*} $(wc -c < \"$file\") $(od -An -tf4 -N8 \"$file\" | tr -s ' ')\" >> '" +
                               inputs_.string() + "'; done || exit 1 ;;\n  esac\ndone\n"
                               "write_times() {\ncat > \"$times\" <<'JSON'\n" + std::string(kTimes) + "JSON\n}\n"
                               "if [ -n \"$engine\" ]; then echo 'serialized engine' > \"$engine\"; exit 0; fi\n" +
                               measure);
    }

    // A dynamic-batch model: image[batch, 3, 8, 8] -> conv.
    void write_model() const {
        models::GraphBuilder graph("tiny", 1);
        graph.add_input("image", models::OnnxElemType::float32,
                        {models::OnnxDim::symbolic("batch"), models::OnnxDim::fixed(3), models::OnnxDim::fixed(8),
                         models::OnnxDim::fixed(8)});
        graph.add_output(graph.conv("conv", "image", 3, 4, {}), models::OnnxElemType::float32, {});
        std::ofstream(model_, std::ios::binary) << graph.serialize();
    }

    BenchmarkSpec spec(DeviceKind device = DeviceKind::cuda) const {
        BenchmarkSpec s;
        s.model = model_.string();
        s.backend = "trtexec";
        s.device = Device{device, 0};
        s.precision = Precision::fp16;
        s.batch_size = 4;
        s.model_cache_dir = (scratch_.path() / "cache").string();
        return s;
    }

    std::vector<std::string> calls() const {
        std::ifstream in(calls_);
        std::vector<std::string> lines;
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        return lines;
    }

    std::size_t builds() const {
        const auto lines = calls();
        return static_cast<std::size_t>(std::count_if(lines.begin(), lines.end(), [](const std::string& line) {
            return line.find("--saveEngine=") != std::string::npos;
        }));
    }

    LoopSettings settings() const { return LoopSettings{200'000'000, 1, 1'000'000'000, 10, 1000}; }

    testing::ScratchDir scratch_;
    std::filesystem::path bin_ = scratch_.path() / "bin";
    std::filesystem::path calls_ = scratch_.path() / "calls.txt";
    std::filesystem::path inputs_ = scratch_.path() / "inputs.txt";  // what the stand-in got through --loadInputs
    std::filesystem::path model_ = scratch_.path() / "tiny.onnx";
    std::string saved_path_;
};

TEST_F(TrtexecBackendTest, WithoutTrtexecEveryCellIsSkippedWithTheReason) {
    if (std::filesystem::exists("/usr/src/tensorrt/bin/trtexec")) GTEST_SKIP() << "TensorRT is installed here";
    setenv("PATH", "/nonexistent", 1);
    TrtexecBackend backend;
    EXPECT_EQ(backend.unsupported_reason(spec()),
              "trtexec not found on PATH or /usr/src/tensorrt/bin; install TensorRT or set "
              "backend_options.trtexec.trtexec");
    BenchmarkSpec configured = spec();
    configured.backend_options["trtexec"] = "/opt/none/trtexec";
    EXPECT_EQ(backend.unsupported_reason(configured),
              "trtexec not found at '/opt/none/trtexec' (backend_options.trtexec.trtexec)");
    configured.backend_options["trtexec"] = (bin_ / "trtexec").string();
    EXPECT_EQ(backend.unsupported_reason(configured), std::nullopt);
}

TEST_F(TrtexecBackendTest, RunsOnCudaOnly) {
    TrtexecBackend backend;
    EXPECT_EQ(backend.unsupported_reason(spec()), std::nullopt) << "found on PATH";
    EXPECT_EQ(backend.unsupported_reason(spec(DeviceKind::cpu)), "backend trtexec does not run on cpu");
    const Capabilities caps = backend.capabilities();
    EXPECT_TRUE(caps.runs_own_loop);
    EXPECT_TRUE(caps.device_timing);
    EXPECT_THAT(caps.model_formats, Contains("engine"));
}

TEST_F(TrtexecBackendTest, LoadBuildsTheEngineOnceThenReusesIt) {
    TrtexecBackend first;
    first.load(model_.string(), spec());
    EXPECT_FALSE(first.engine_was_cached());
    EXPECT_EQ(first.version(), "10.9.0");
    EXPECT_EQ(first.engine_path().parent_path(), scratch_.path() / "cache" / "trtexec-engines");
    EXPECT_THAT(first.engine_path().filename().string(),
                MatchesRegex(".*\\.fp16\\.b4\\.nvidia-h200\\.trt10-9-0\\.[0-9a-f]{16}\\.engine"));
    EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(first.engine_path()).replace_extension(".key")));
    std::ifstream engine(first.engine_path());
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(engine), {}), "serialized engine\n");
    ASSERT_EQ(builds(), 1u);
    const auto lines = calls();
    const std::string build = *std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
        return line.find("--saveEngine=") != std::string::npos;
    });
    EXPECT_THAT(build, HasSubstr("--onnx=" + model_.string()));
    EXPECT_THAT(build, HasSubstr(" --fp16 --minShapes=image:4x3x8x8 --optShapes=image:4x3x8x8 "
                                 "--maxShapes=image:4x3x8x8 --timingCacheFile="));
    EXPECT_THAT(build, HasSubstr("timing.nvidia-h200.trt10-9-0.cache --device=0 --skipInference"));

    TrtexecBackend second;
    second.load(model_.string(), spec());
    EXPECT_TRUE(second.engine_was_cached());
    EXPECT_EQ(second.engine_path(), first.engine_path());
    EXPECT_EQ(builds(), 1u) << "the second load reuses the engine";

    BenchmarkSpec other_batch = spec();
    other_batch.batch_size = 8;
    TrtexecBackend third;
    third.load(model_.string(), other_batch);
    EXPECT_FALSE(third.engine_was_cached());
    EXPECT_EQ(builds(), 2u) << "another batch is another engine";

    BenchmarkSpec other_args = spec();
    other_args.backend_options = {{"extra_args", "--useCudaGraph"}};
    TrtexecBackend fourth;
    fourth.load(model_.string(), other_args);
    EXPECT_FALSE(fourth.engine_was_cached());
    EXPECT_NE(fourth.engine_path(), first.engine_path()) << "other arguments build another engine";
    EXPECT_EQ(builds(), 3u);
}

TEST_F(TrtexecBackendTest, AnEngineWhoseKeyDoesNotMatchIsRebuilt) {
    TrtexecBackend first;
    first.load(model_.string(), spec());
    std::ofstream(std::filesystem::path(first.engine_path()).replace_extension(".key"), std::ios::app) << "stale\n";
    TrtexecBackend second;
    second.load(model_.string(), spec());
    EXPECT_FALSE(second.engine_was_cached());
    EXPECT_EQ(builds(), 2u);
}

TEST_F(TrtexecBackendTest, RunOwnLoopDeliversEveryQueryOnTheMonotonicClock) {
    TrtexecBackend backend;
    backend.load(model_.string(), spec());
    CollectingSink sink;
    const std::int64_t before = monotonic_ns();
    backend.run_own_loop(settings(), sink);
    const std::int64_t after = monotonic_ns();

    const std::string run = calls().back();
    EXPECT_THAT(run, HasSubstr("--loadEngine=" + backend.engine_path().string() +
                               " --warmUp=200 --duration=1 --iterations=10 --exportTimes="));
    EXPECT_THAT(run, HasSubstr("times.json --shapes=image:4x3x8x8 --device=0 --useSpinWait"));
    ASSERT_EQ(sink.records.size(), 3u);
    const auto& r = sink.records;
    EXPECT_EQ(r[0].e2e_ns, 1'500'000);
    EXPECT_EQ(r[1].e2e_ns, 1'250'000);
    EXPECT_EQ(r[2].e2e_ns, 1'000'000);
    EXPECT_EQ(r[0].h2d_ns, 100'000);
    EXPECT_EQ(r[0].compute_ns, 1'300'000);
    EXPECT_EQ(r[0].d2h_ns, 100'000);
    EXPECT_EQ(r[0].enqueue_ns, 300'000);
    EXPECT_EQ(r[1].start_ns - r[0].start_ns, 2'000'000);
    EXPECT_EQ(r[2].start_ns - r[0].start_ns, 4'000'000);
    // Placed so that the last query ends when trtexec exited.
    EXPECT_GE(r[0].start_ns, before);
    EXPECT_LE(r[2].start_ns + r[2].e2e_ns, after);
}

std::string file_text(const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_F(TrtexecBackendTest, ThePlansInputsReachTrtexecAsOneRawFilePerInput) {
    // Three samples of image[4, 3, 8, 8]: 0, 1, 2, ... then 1000, 1001, ... then 2000, ...
    const auto set = scratch_.path() / "set";
    for (int k = 0; k < 3; ++k) {
        std::filesystem::create_directories(set / std::to_string(k));
        write_npy_file(set / std::to_string(k) / "image.npy",
                       testing::counting_tensor("image", {4, 3, 8, 8}, 1000.0F * static_cast<float>(k)));
    }
    BenchmarkSpec cell = spec();
    cell.inputs = set.string();
    TrtexecBackend backend;
    ASSERT_EQ(backend.unsupported_reason(cell), std::nullopt);
    backend.load(model_.string(), cell);
    backend.prepare({});
    const auto metrics = backend.prepared_metrics();
    ASSERT_EQ(metrics.size(), 2u);
    EXPECT_EQ(metrics[0].name, harness_metrics::kInputSamples);
    EXPECT_EQ(metrics[0].value, 3.0);
    EXPECT_EQ(metrics[1].name, harness_metrics::kInputsCycled);
    EXPECT_EQ(metrics[1].value, 0.0) << "trtexec takes one file per input: the first sample alone";
    CollectingSink sink;
    backend.run_own_loop(settings(), sink);
    EXPECT_EQ(sink.records.size(), 3u);
    EXPECT_THAT(calls().back(), MatchesRegex(".* --loadInputs=image:[^ ,]*/input0\\.bin --device=0 .*"));
    // 4 x 3 x 8 x 8 float32 = 3072 bytes, the first sample's: 0, 1, ...
    EXPECT_EQ(file_text(inputs_), "image 3072  0 1\n");
}

TEST_F(TrtexecBackendTest, InputFilesThatDoNotFitTheModelFailInPrepareWithOneLine) {
    testing::write_npz(scratch_.path() / "b2.npz", {testing::counting_tensor("image", {2, 3, 8, 8})});
    BenchmarkSpec cell = spec();
    cell.inputs = (scratch_.path() / "b2.npz").string();
    TrtexecBackend backend;
    backend.load(model_.string(), cell);
    EXPECT_THAT([&] { backend.prepare({}); },
                ::testing::ThrowsMessage<UserError>(
                    "inputs " + cell.inputs + ":image.npy: shape [2, 3, 8, 8] does not fit input image, which takes "
                    "[4, 3, 8, 8] at this cell's batch size (the first dimension)"));
    EXPECT_TRUE(backend.prepared_metrics().empty());
}

TEST_F(TrtexecBackendTest, InputFilesForAReadyEngineOrBesideLoadInputsAreRefused) {
    BenchmarkSpec cell = spec();
    cell.inputs = (scratch_.path() / "x.npz").string();
    cell.model = (scratch_.path() / "prebuilt.engine").string();
    TrtexecBackend backend;
    EXPECT_EQ(backend.unsupported_reason(cell),
              "trtexec takes the plan's inputs for an ONNX model only: inferbench reads the input names and sizes from "
              "it, and a ready engine (" + cell.model + ") does not say them; give the ONNX model, or leave inputs "
              "unset and give --loadInputs in backend_options.trtexec.extra_args");
    cell.model = model_.string();
    cell.backend_options = {{"extra_args", "--loadInputs=image:x.bin"}};
    EXPECT_EQ(backend.unsupported_reason(cell),
              "the plan's inputs and --loadInputs in backend_options.trtexec.extra_args both give trtexec's inputs; "
              "keep one of them");
    EXPECT_THROW(backend.load(model_.string(), cell), UserError);
}

TEST_F(TrtexecBackendTest, Int64InputsBeforeTensorRt10AreRefusedAsTheyWouldNotFit) {
    models::GraphBuilder graph("ids", 1);
    graph.add_input("ids", models::OnnxElemType::int64, {models::OnnxDim::symbolic("batch"), models::OnnxDim::fixed(8)});
    graph.add_node({"Identity", "same", {"ids"}, {"out"}, {}});
    graph.add_output("out", models::OnnxElemType::int64, {});
    const auto ids_model = scratch_.path() / "ids.onnx";
    std::ofstream(ids_model, std::ios::binary) << graph.serialize();
    BenchmarkSpec cell = spec();
    cell.model = ids_model.string();
    cell.inputs = (scratch_.path() / "ids.npz").string();
    // TensorRT 8.6's trtexec, as far as the version probe and an engine build go.
    write_executable(bin_ / "trtexec",
                     "#!/bin/sh\nfor arg in \"$@\"; do case \"$arg\" in\n"
                     "  --help) echo '&&&& RUNNING TensorRT.trtexec [TensorRT v8601] # trtexec --help'; exit 0 ;;\n"
                     "  --saveEngine=*) echo engine > \"${arg#--saveEngine=}\" ;;\nesac; done\n");
    TrtexecBackend backend;
    EXPECT_THAT([&] { backend.load(ids_model.string(), cell); },
                ::testing::ThrowsMessage<UserError>(
                    "trtexec: TensorRT 8.6.1 makes the int64 input ids an int32 one, which the plan's int64 arrays do "
                    "not fit; use TensorRT 10 or later, or leave inputs unset for this model"));
    cell.inputs.clear();
    EXPECT_NO_THROW(backend.load(ids_model.string(), cell)) << "trtexec's own inputs: nothing to fit";
}

TEST_F(TrtexecBackendTest, AFullSinkTakesNoMore) {
    TrtexecBackend backend;
    backend.load(model_.string(), spec());
    CollectingSink sink(2);
    backend.run_own_loop(settings(), sink);
    EXPECT_EQ(sink.records.size(), 2u);
}

TEST_F(TrtexecBackendTest, StopRequestInterruptsTrtexecAndKeepsWhatItWrote) {
    write_fake_trtexec(bin_ / "trtexec", kRunUntilInterrupted);
    TrtexecBackend backend;
    backend.load(model_.string(), spec());
    CollectingSink sink(1000, monotonic_ns() + 300'000'000);
    const std::int64_t begin = monotonic_ns();
    backend.run_own_loop(settings(), sink);
    EXPECT_LT(monotonic_ns() - begin, 2'000'000'000) << "SIGINT ends it without waiting for SIGTERM";
    EXPECT_EQ(sink.records.size(), 3u);
}

TEST_F(TrtexecBackendTest, FailingRunIsAnErrorWithTrtexecsLastLines) {
    write_fake_trtexec(bin_ / "trtexec", kFail);
    TrtexecBackend backend;
    backend.load(model_.string(), spec());
    CollectingSink sink;
    try {
        backend.run_own_loop(settings(), sink);
        FAIL() << "trtexec failed";
    } catch (const std::runtime_error& e) {
        EXPECT_THAT(e.what(), HasSubstr("trtexec failed (exit code 1): &&&& RUNNING TensorRT.trtexec"));
        EXPECT_THAT(e.what(), HasSubstr("\n[E] Error[1]: IRuntime::deserializeCudaEngine"));
        EXPECT_THAT(e.what(), HasSubstr("&&&& FAILED"));
    }
    EXPECT_TRUE(sink.records.empty());
}

TEST_F(TrtexecBackendTest, EngineFileRunsAsItIs) {
    const auto engine = scratch_.path() / "prebuilt.plan";
    std::ofstream(engine) << "engine bytes";
    TrtexecBackend backend;
    backend.load(engine.string(), spec());
    EXPECT_EQ(builds(), 0u);
    CollectingSink sink;
    backend.run_own_loop(settings(), sink);
    EXPECT_THAT(calls().back(), HasSubstr("--loadEngine=" + engine.string() + " "));
    EXPECT_THAT(calls().back(), ::testing::Not(HasSubstr("--shapes")));
    EXPECT_EQ(sink.records.size(), 3u);
}

TEST_F(TrtexecBackendTest, MissingModelAndFixedBatchAreLoadErrors) {
    TrtexecBackend backend;
    EXPECT_THROW(backend.load((scratch_.path() / "absent.onnx").string(), spec()), std::runtime_error);
    models::GraphBuilder graph("fixed", 1);
    graph.add_input("x", models::OnnxElemType::float32, {models::OnnxDim::fixed(1), models::OnnxDim::fixed(3)});
    const auto fixed = scratch_.path() / "fixed.onnx";
    std::ofstream(fixed, std::ios::binary) << graph.serialize();
    EXPECT_THROW(backend.load(fixed.string(), spec()), UserError);  // batch 4 of a batch-1 model
}

TEST_F(TrtexecBackendTest, TensorRt11Fp32BuildsStronglyTypedAndRunsWithTensorRt10sMeasurement) {
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, kTrt11);
    BenchmarkSpec cell = spec();
    cell.precision = Precision::fp32;
    TrtexecBackend backend;
    EXPECT_EQ(backend.version(), "11.1.0") << "before load: trtexec on PATH, as `list backends` shows it";
    ASSERT_EQ(backend.unsupported_reason(cell), std::nullopt);
    backend.load(model_.string(), cell);
    EXPECT_EQ(backend.version(), "11.1.0");
    EXPECT_THAT(backend.engine_path().filename().string(), HasSubstr(".fp32.b4.nvidia-h200.trt11-1-0."));
    ASSERT_EQ(builds(), 1u);
    const auto lines = calls();
    const std::string build = *std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
        return line.find("--saveEngine=") != std::string::npos;
    });
    EXPECT_THAT(build, HasSubstr(" --noTF32 --minShapes=image:4x3x8x8 "));
    EXPECT_THAT(build, ::testing::Not(HasSubstr("--stronglyTyped"))) << "always on in 11";
    CollectingSink sink;
    backend.run_own_loop(settings(), sink);
    EXPECT_THAT(calls().back(), HasSubstr(" --device=0 --includeDataTransfers --noCudaGraph"));
    EXPECT_THAT(calls().back(), ::testing::Not(HasSubstr("--useSpinWait"))) << "11 spins by default";
    EXPECT_EQ(sink.records.size(), 3u);
}

// The build line's --onnx file.
std::string onnx_of(const std::string& build) {
    const auto begin = build.find("--onnx=") + 7;
    return build.substr(begin, build.find(' ', begin) - begin);
}

TEST_F(TrtexecBackendTest, TensorRt11Fp16BuildsFromTheConvertedFileWithoutAFlag) {
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, kTrt11);
    TrtexecBackend backend;
    ASSERT_EQ(backend.unsupported_reason(spec()), std::nullopt) << "fp16 is a conversion inferbench makes";
    backend.load(model_.string(), spec());
    ASSERT_EQ(builds(), 1u);
    const std::string build = calls().back();
    EXPECT_THAT(build, ::testing::Not(HasSubstr("--fp16")));
    const std::string typed = onnx_of(build);
    EXPECT_NE(typed, model_.string());
    EXPECT_THAT(typed, HasSubstr((scratch_.path() / "cache").string())) << "cached under the model cache";
    ASSERT_TRUE(std::filesystem::is_regular_file(typed));

    // The converted file given as the model: the user's own fp16 file, built as it is...
    BenchmarkSpec own = spec();
    own.model = typed;
    TrtexecBackend again;
    ASSERT_EQ(again.unsupported_reason(own), std::nullopt);
    again.load(typed, own);
    EXPECT_EQ(onnx_of(calls().back()), typed);
    // ...and refused, in one line, for a plan that says fp32: never built in another precision.
    own.precision = Precision::fp32;
    const auto mismatch = again.unsupported_reason(own);
    ASSERT_TRUE(mismatch);
    EXPECT_THAT(*mismatch, ::testing::StartsWith("trtexec 11.1.0: "));
    EXPECT_THAT(*mismatch, HasSubstr("fp32"));
    EXPECT_EQ(mismatch->find('\n'), std::string::npos);
    EXPECT_THROW(again.load(typed, own), UserError);
}

TEST_F(TrtexecBackendTest, TensorRt11Int8WithoutAQuantizedFileIsSkippedWithTheReason) {
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, kTrt11);
    BenchmarkSpec cell = spec();
    cell.precision = Precision::int8;
    TrtexecBackend backend;
    const auto reason = backend.unsupported_reason(cell);
    ASSERT_TRUE(reason) << "trtexec has no float32 reference run to calibrate with";
    EXPECT_THAT(*reason, ::testing::StartsWith("trtexec 11.1.0: "));
    EXPECT_THAT(*reason, HasSubstr("int8"));
    EXPECT_THROW(backend.load(model_.string(), cell), UserError);
    EXPECT_EQ(builds(), 0u);
    write_fake_trtexec(bin_ / "trtexec", kMeasure);
    EXPECT_EQ(backend.unsupported_reason(cell), std::nullopt) << "10.9 builds int8 with --int8";
}

// What the worker asks before load() with the model resolved (a zoo model too, which unsupported_reason() cannot
// read): on 11 the typed file, or the skip; on 10 the model as it is.
TEST_F(TrtexecBackendTest, ConvertModelMakesTheTypedFileOrSaysWhyTheCellIsSkipped) {
    TrtexecBackend backend;
    EXPECT_EQ(backend.convert_model(model_.string(), spec()).model_path, model_.string()) << "10.9: --fp16";
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, kTrt11);
    const ConvertedModel fp16 = backend.convert_model(model_.string(), spec());
    EXPECT_TRUE(fp16.skip_reason.empty()) << fp16.skip_reason;
    EXPECT_THAT(fp16.model_path, HasSubstr("/converted/tiny.fp16."));
    backend.load(fp16.model_path, spec());
    EXPECT_EQ(onnx_of(calls().back()), fp16.model_path) << "load() builds the typed file as it is";
    BenchmarkSpec int8 = spec();
    int8.precision = Precision::int8;
    const ConvertedModel skipped = backend.convert_model(model_.string(), int8);
    EXPECT_THAT(skipped.skip_reason, ::testing::StartsWith("trtexec 11.1.0: int8 on TensorRT 11 needs a Q/DQ file"));
    const auto engine = scratch_.path() / "prebuilt.plan";
    std::ofstream(engine) << "engine bytes";
    EXPECT_EQ(backend.convert_model(engine.string(), int8).model_path, engine.string()) << "an engine is as it is";
}

TEST_F(TrtexecBackendTest, TensorRt11RefusesARemovedFlagAsTheCellsReason) {
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, kTrt11);
    BenchmarkSpec cell = spec();
    cell.precision = Precision::fp32;
    cell.backend_options = {{"extra_args", "--best"}};
    TrtexecBackend backend;
    const std::string reason =
        "backend_options.trtexec.extra_args holds --best, which trtexec 11.1.0 refuses: --best was removed in "
        "TensorRT 11 (every network is strongly typed: the precision comes from the ONNX file's types); remove it";
    EXPECT_EQ(backend.unsupported_reason(cell), reason);
    EXPECT_THAT([&] { backend.load(model_.string(), cell); }, ::testing::ThrowsMessage<UserError>(reason));
    EXPECT_EQ(builds(), 0u);
}

TEST_F(TrtexecBackendTest, ANewerTensorRtThanKnownIsRefusedInOneLine) {
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, "120000");
    TrtexecBackend backend;
    const auto reason = backend.unsupported_reason(spec());
    ASSERT_TRUE(reason);
    EXPECT_EQ(*reason, "TensorRT 12.0.0 (trtexec at " + (bin_ / "trtexec").string() +
                           ") is newer than the newest major version this inferbench knows (11.x): how it takes a "
                           "precision is unknown, so nothing is built with it; use TensorRT 11.x or older, or an "
                           "inferbench that knows TensorRT 12");
    EXPECT_THROW(backend.load(model_.string(), spec()), UserError);
    EXPECT_EQ(builds(), 0u);
}

// The stand-in itself: given TensorRT 10's command line, trtexec 11 fails as its source says, naming the flag.
TEST_F(TrtexecBackendTest, TheTensorRt11StandInRefusesTensorRt10sPrecisionFlags) {
    write_fake_trtexec(bin_ / "trtexec", kMeasure11, kTrt11);
    const CapturedRun refused = run_captured({(bin_ / "trtexec").string(), "--onnx=m.onnx", "--fp16", "--calib=c.bin"},
                                             std::nullopt, 10'000);
    EXPECT_EQ(refused.status.code, 1);
    EXPECT_THAT(refused.out, HasSubstr("&&&& RUNNING TensorRT.trtexec [TensorRT v110100]"));
    EXPECT_THAT(refused.out, HasSubstr("[E] Unknown option: --fp16 \n[E] Unknown option: --calib c.bin\n"));
    const CapturedRun typed = run_captured({(bin_ / "trtexec").string(), "--onnx=m.onnx", "--stronglyTyped",
                                            "--saveEngine=" + (scratch_.path() / "e.plan").string()},
                                           std::nullopt, 10'000);
    EXPECT_TRUE(typed.status.success()) << "--stronglyTyped is a no-op in 11";
    EXPECT_THAT(typed.out, HasSubstr("Precision: Strongly Typed"));
    // And TensorRT 10's refuses the flags only 11 knows, so a 10 run never carries them unseen.
    write_fake_trtexec(bin_ / "trtexec", kMeasure);
    const CapturedRun ten = run_captured({(bin_ / "trtexec").string(), "--loadEngine=e.plan", "--noCudaGraph"},
                                         std::nullopt, 10'000);
    EXPECT_EQ(ten.status.code, 1);
    EXPECT_THAT(ten.out, HasSubstr("[E] Unknown option: --noCudaGraph "));
}

TEST(TrtexecOptions, ParsedAndChecked) {
    const TrtexecOptions options =
        parse_trtexec_options({{"trtexec", " /opt/trt/trtexec "}, {"extra_args", " --useCudaGraph  --noDataTransfers"}});
    EXPECT_EQ(options.trtexec, "/opt/trt/trtexec");
    EXPECT_EQ(options.extra_args, (std::vector<std::string>{"--useCudaGraph", "--noDataTransfers"}));
    EXPECT_EQ(trtexec_option_list().size(), 2u);
    const TrtexecOptions defaults = parse_trtexec_options({});
    EXPECT_EQ(defaults.trtexec, "");
    EXPECT_TRUE(defaults.extra_args.empty());
    // The same one-line error as every backend's (backends/options.hpp).
    EXPECT_THAT(
        [] {
            parse_trtexec_options({{"threads", "2"}});
        },
        ::testing::ThrowsMessage<UserError>("unknown trtexec option 'threads'; valid options: trtexec, extra_args (`inferbench list backends --options` says what each does)"));
}

TEST(TrtexecModule, LoadsThroughTheRegistry) {
    const auto registry = BackendRegistry::discover({INFERBENCH_TRTEXEC_MODULE_DIR});
    const auto backend = registry.create("trtexec");
    EXPECT_EQ(backend->name(), "trtexec");
    EXPECT_TRUE(backend->capabilities().runs_own_loop);
}

}  // namespace
}  // namespace inferbench::trtexec
