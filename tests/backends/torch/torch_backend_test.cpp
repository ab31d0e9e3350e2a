// The LibTorch backend on this machine's CPU: zoo models through the ONNX interpreter, TorchScript
// files, precisions and options. (The CUDA path is compiled and run on the GPU machine only.)
#include "backends/torch/torch_backend.hpp"

#include <atomic>

#include <gtest/gtest.h>
#include <torch/script.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/zoo.hpp"
#include "runner/random_inputs.hpp"

namespace inferbench {
namespace {

BenchmarkSpec cpu_spec(std::int64_t batch, Precision precision = Precision::fp32) {
    BenchmarkSpec spec;
    spec.backend = "torch";
    spec.batch_size = batch;
    spec.precision = precision;
    return spec;
}

// A TorchScript file whose forward doubles its input.
std::string write_doubler(const testing::ScratchDir& dir) {
    torch::jit::Module module("Doubler");
    module.define("def forward(self, x):\n    return x * 2\n");
    const std::string path = dir.file("doubler.pt");
    module.save(path);
    return path;
}

TEST(TorchBackend, RunsAZooModelThroughTheOnnxInterpreter) {
    testing::ScratchDir dir;
    const auto path = models::export_onnx("mobilenet", dir.path(), 1);
    auto backend = make_torch_backend();
    const auto spec = cpu_spec(2);
    ASSERT_FALSE(backend->unsupported_reason(spec));
    backend->load(path.string(), spec);
    const auto inputs = backend->inputs();
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_EQ(inputs[0].shape, (std::vector<std::int64_t>{2, 3, 224, 224}));
    EXPECT_EQ(inputs[0].dtype, DType::f32);
    backend->prepare(make_random_inputs(inputs, 7));
    DeviceTimes times;
    backend->infer(times);
    EXPECT_EQ(times.compute_ns, kNotMeasured) << "no device timing on the CPU";
}

TEST(TorchBackend, Bf16OnTheCpu) {
    testing::ScratchDir dir;
    const auto path = models::export_onnx("mobilenet", dir.path(), 1);
    auto backend = make_torch_backend();
    const auto spec = cpu_spec(1, Precision::bf16);
    ASSERT_FALSE(backend->unsupported_reason(spec));
    backend->load(path.string(), spec);
    backend->prepare(make_random_inputs(backend->inputs(), 7));
    DeviceTimes times;
    backend->infer(times);
}

TEST(TorchBackend, RunsATorchScriptFile) {
    testing::ScratchDir dir;
    const std::string path = write_doubler(dir);

    auto backend = make_torch_backend();
    auto spec = cpu_spec(3);
    spec.backend_options["input_shape"] = "4x5";
    backend->load(path, spec);
    EXPECT_EQ(backend->inputs()[0].shape, (std::vector<std::int64_t>{3, 4, 5}));
    backend->prepare(make_random_inputs(backend->inputs(), 1));
    DeviceTimes times;
    backend->infer(times);

    spec.backend_options.erase("input_shape");
    auto without_shape = make_torch_backend();
    try {
        without_shape->load(path, spec);
        FAIL() << "a TorchScript file needs input_shape";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("set backend_options.torch.input_shape"), std::string::npos);
    }
}

// layer_profile: after the measured runs, each node of the interpreted graph timed over N runs.
TEST(TorchBackend, LayerProfileTimesEveryNodeTheInterpreterRuns) {
    testing::ScratchDir dir;
    const auto path = models::export_onnx("mobilenet", dir.path(), 1);
    auto backend = make_torch_backend();
    auto spec = cpu_spec(1);
    spec.backend_options["layer_profile"] = "2";
    backend->load(path.string(), spec);
    backend->prepare(make_random_inputs(backend->inputs(), 7));
    DeviceTimes times;
    backend->infer(times);
    const std::atomic<std::int32_t> go{0};
    const auto layers = backend->profile_layers(go);
    ASSERT_GT(layers.size(), 20u) << "MobileNet has 28 convolutions";
    std::int64_t total = 0, convolutions = 0;
    for (const auto& layer : layers) {
        EXPECT_FALSE(layer.node.empty());
        EXPECT_EQ(layer.provider, "LibTorch CPU");
        EXPECT_EQ(layer.calls, 2);
        EXPECT_GE(layer.total_ns, 0);
        total += layer.total_ns;
        convolutions += layer.op_type == "Conv" ? 1 : 0;
    }
    EXPECT_GT(total, 0);
    EXPECT_GE(convolutions, 27);
    EXPECT_EQ(layers.front().op_type, "Conv") << "in the order the nodes run";

    const std::atomic<std::int32_t> stopped{1};
    EXPECT_TRUE(backend->profile_layers(stopped).empty()) << "Ctrl-C before the first timed run: nothing";

    auto off = make_torch_backend();
    off->load(path.string(), cpu_spec(1));
    off->prepare(make_random_inputs(off->inputs(), 7));
    EXPECT_TRUE(off->profile_layers(go).empty()) << "off by default";
}

TEST(TorchBackend, LayerProfileOfATorchScriptFileIsRefusedAtLoad) {
    testing::ScratchDir dir;
    const std::string path = write_doubler(dir);
    auto backend = make_torch_backend();
    auto spec = cpu_spec(1);
    spec.backend_options["input_shape"] = "4";
    spec.backend_options["layer_profile"] = "5";
    try {
        backend->load(path, spec);
        FAIL() << "TorchScript runs as one graph";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("layer_profile: per-layer times need an ONNX model"), std::string::npos)
            << e.what();
    }
}

TEST(TorchBackend, SaysWhyACellCannotRun) {
    auto backend = make_torch_backend();
    auto spec = cpu_spec(1);
    spec.device = Device{DeviceKind::cuda, 0};
    const auto cuda = backend->unsupported_reason(spec);
    ASSERT_TRUE(cuda);
    EXPECT_NE(cuda->find("has no CUDA"), std::string::npos) << *cuda;
    spec = cpu_spec(1, Precision::int8);
    EXPECT_EQ(backend->unsupported_reason(spec), "backend torch has no int8 support");
    spec = cpu_spec(1);
    spec.backend_options["cuda_graph"] = "true";
    EXPECT_EQ(backend->unsupported_reason(spec), "cuda_graph and device_resident need a cuda device");
    spec.backend_options["cuda_graph"] = "maybe";
    EXPECT_THROW(backend->unsupported_reason(spec), UserError);
    spec.backend_options.clear();
    spec.backend_options["colour"] = "blue";
    EXPECT_THROW(backend->unsupported_reason(spec), UserError);
}

TEST(TorchBackend, Fp16OnTheCpuIsSkippedWhereLibTorchLacksIt) {
    auto backend = make_torch_backend();
    const auto reason = backend->unsupported_reason(cpu_spec(1, Precision::fp16));
    if (reason) {
        EXPECT_NE(reason->find("no fp16 convolution on the CPU"), std::string::npos) << *reason;
    }
}

}  // namespace
}  // namespace inferbench
