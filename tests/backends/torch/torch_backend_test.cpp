// The LibTorch backend on this machine's CPU: zoo models through the ONNX interpreter, TorchScript
// files, precisions and options. (The CUDA path is compiled and run on the GPU machine only.)
#include "backends/torch/torch_backend.hpp"

#include <atomic>
#include <cstring>
#include <fstream>
#include <memory>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <torch/script.h>

#include "backends/options.hpp"
#include "backends/random_inputs.hpp"
#include "backends/torch/onnx_model_writer.hpp"
#include "backends/torch/onnx_test_graphs.hpp"
#include "backends/torch/torch_model.hpp"
#include "backends/torch/torch_options.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/zoo.hpp"

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

// A pipeline cell's batches: new inputs before each infer() without a new prepare(), each run on the new ones.
TEST(TorchBackend, StagedInputsAreWhatTheNextInferRuns) {
    testing::ScratchDir dir;
    auto backend = make_torch_backend();
    EXPECT_TRUE(backend->capabilities().stages_inputs);
    auto spec = cpu_spec(2);
    spec.backend_options["input_shape"] = "3";
    backend->load(write_doubler(dir), spec);
    backend->prepare(make_random_inputs(backend->inputs(), 1));
    for (int batch = 0; batch < 3; ++batch) {
        std::vector<float> x(6);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(batch * 10) + static_cast<float>(i);
        HostTensor input{backend->inputs()[0], std::vector<std::byte>(x.size() * sizeof(float))};
        std::memcpy(input.data.data(), x.data(), input.data.size());
        backend->stage_inputs(std::vector<HostTensor>{input});
        DeviceTimes times;
        backend->infer(times);
        const auto outputs = backend->last_outputs();
        ASSERT_EQ(outputs.size(), 1u);
        std::vector<float> y(x.size());
        ASSERT_EQ(outputs[0].data.size(), y.size() * sizeof(float));
        std::memcpy(y.data(), outputs[0].data.data(), outputs[0].data.size());
        for (std::size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], 2 * x[i]) << "batch " << batch << " element " << i;
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

// y = If(sum(x) > 0) then -x else relu(x): the condition is known only once x is.
std::string write_data_dependent_if(const testing::ScratchDir& dir) {
    namespace onnx = models::onnx;
    const auto value = [](const std::string& name) { return onnx::OnnxValueInfo{name, onnx::DataType::float32, false, {}}; };
    const auto branch = [&](const std::string& op, const std::string& out) {
        auto g = std::make_shared<onnx::OnnxGraph>();
        g->name = out;
        g->nodes = {{out, op, "", {"x"}, {out}, {}}};
        g->outputs = {value(out)};
        return g;
    };
    onnx::OnnxModel m;
    m.ir_version = 8;
    m.opset_imports = {{"", 17}};
    m.graph.inputs = {{"x", onnx::DataType::float32, true, {std::string("batch"), std::int64_t{3}}}};
    m.graph.outputs = {value("y")};
    m.graph.initializers = {torch_onnx::test_graphs::to_onnx("zero", torch::tensor(0.0F))};
    m.graph.nodes = {{"sum", "ReduceSum", "", {"x"}, {"sum"}, {}}, {"big", "Greater", "", {"sum", "zero"}, {"big"}, {}},
                     {"choose", "If", "", {"big"}, {"y"}, {}}};
    m.graph.nodes.back().subgraphs = {{"then_branch", branch("Neg", "n")}, {"else_branch", branch("Relu", "r")}};
    const std::string path = dir.file("if.onnx");
    std::ofstream(path, std::ios::binary) << torch_onnx::test_graphs::serialize(m);
    return path;
}

// A CUDA graph replays one branch: such a model is refused before capture, naming the node and
// the option; specialize() leaves the If (its condition needs x's values). Runs without a graph.
TEST(TorchBackend, CudaGraphRefusesAnIfDecidedAtRunTime) {
    const testing::ScratchDir dir;
    const std::string path = write_data_dependent_if(dir);
    auto model = load_torch_model(path, TorchModelConfig{});
    const torch::Tensor x = torch::randn({2, 3});
    model->specialize({x});
    EXPECT_THAT([&] { check_cuda_graph_capturable(*model, path); },
                ::testing::ThrowsMessage<UserError>(::testing::AllOf(
                    ::testing::HasSubstr("if.onnx: node 'choose' (If) picks its branch from a value computed at run time"),
                    ::testing::HasSubstr("set backend_options.torch.cuda_graph=false"))));
    const torch::Tensor y = model->forward({x})[0];
    EXPECT_TRUE(torch::equal(y, x.sum().item<float>() > 0 ? -x : torch::relu(x)));
    // A model without such nodes passes.
    const auto zoo = models::export_onnx("mobilenet", dir.path(), 1);
    auto plain = load_torch_model(zoo.string(), TorchModelConfig{});
    plain->specialize({torch::randn({1, 3, 224, 224})});
    EXPECT_NO_THROW(check_cuda_graph_capturable(*plain, zoo.string()));
}

TEST(TorchBackend, SharedOptionsAreTheOneDeclaration) {
    EXPECT_THAT(torch_option_list(), ::testing::IsSupersetOf({device_resident_option(), cuda_graph_option(), threads_option()}));
}

}  // namespace
}  // namespace inferbench
