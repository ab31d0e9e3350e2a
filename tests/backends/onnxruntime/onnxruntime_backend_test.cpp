// The ONNX Runtime backend on tiny models written by this file: batch resolution, real outputs,
// clear errors for models the harness cannot feed, and the shared module's entry point.
#include "backends/onnxruntime/onnxruntime_backend.hpp"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>

#include "backends/onnxruntime/cuda_runtime.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Just enough of the protobuf wire format to write an onnx.proto ModelProto.
class ProtoWriter {
public:
    ProtoWriter& varint(int field, std::int64_t value) {
        key(field, 0);
        raw_varint(static_cast<std::uint64_t>(value));
        return *this;
    }
    ProtoWriter& bytes(int field, std::string_view value) {
        key(field, 2);
        raw_varint(value.size());
        out_.append(value);
        return *this;
    }
    ProtoWriter& message(int field, const ProtoWriter& value) { return bytes(field, value.out_); }
    const std::string& str() const { return out_; }

private:
    void key(int field, int wire_type) { raw_varint(static_cast<std::uint64_t>(field << 3 | wire_type)); }
    void raw_varint(std::uint64_t value) {
        for (; value >= 0x80; value >>= 7) out_ += static_cast<char>((value & 0x7f) | 0x80);
        out_ += static_cast<char>(value);
    }
    std::string out_;
};

// A dimension: a fixed size, or (size < 0) the symbol `param`.
struct Dim {
    std::int64_t size = -1;
    std::string param;
};

// ValueInfoProto{name=1, type=2: TypeProto{tensor_type=1: {elem_type=1, shape=2: {dim=1: {dim_value=1, dim_param=2}}}}}
ProtoWriter value_info(std::string_view name, int elem_type, const std::vector<Dim>& dims) {
    ProtoWriter shape;
    for (const Dim& d : dims) {
        ProtoWriter dim;
        if (d.size >= 0) dim.varint(1, d.size);
        else dim.bytes(2, d.param);
        shape.message(1, dim);
    }
    ProtoWriter tensor;
    tensor.varint(1, elem_type).message(2, shape);
    ProtoWriter type;
    type.message(1, tensor);
    ProtoWriter info;
    info.bytes(1, name).message(2, type);
    return info;
}

constexpr int kFloat = 1;   // TensorProto.DataType
constexpr int kUint16 = 4;

// ModelProto{ir_version=1, producer_name=2, graph=7, opset_import=8} with one node Y = op(X, X...).
std::string one_node_model(std::string_view op, int inputs_to_op, int elem_type, const std::vector<Dim>& dims) {
    ProtoWriter node;  // NodeProto{input=1, output=2, op_type=4}
    for (int i = 0; i < inputs_to_op; ++i) node.bytes(1, "X");
    node.bytes(2, "Y").bytes(4, op);
    ProtoWriter graph;  // GraphProto{node=1, name=2, input=11, output=12}
    graph.message(1, node).bytes(2, "test").message(11, value_info("X", elem_type, dims));
    graph.message(12, value_info("Y", elem_type, dims));
    ProtoWriter opset;
    opset.bytes(1, "").varint(2, 13);
    ProtoWriter model;
    model.varint(1, 8).bytes(2, "inferbench-test").message(7, graph).message(8, opset);
    return model.str();
}

std::string add_model(const std::vector<Dim>& dims) { return one_node_model("Add", 2, kFloat, dims); }

HostTensor float_tensor(const TensorInfo& info, const std::vector<float>& values) {
    HostTensor tensor{info, std::vector<std::byte>(values.size() * sizeof(float))};
    std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
    return tensor;
}

class OnnxRuntimeBackendTest : public ::testing::Test {
protected:
    OnnxRuntimeBackendTest() {
        dir_ = std::filesystem::temp_directory_path() /
               ("inferbench-ort-test-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
        std::filesystem::create_directories(dir_);
        spec_.backend = "onnxruntime";
        spec_.batch_size = 3;
    }
    ~OnnxRuntimeBackendTest() override {
        std::error_code ignored;
        std::filesystem::remove_all(dir_, ignored);
    }
    std::string write(std::string_view name, const std::string& bytes) const {
        const std::string path = (dir_ / name).string();
        std::ofstream(path, std::ios::binary) << bytes;
        return path;
    }
    std::string load_error(const std::string& path) {
        try {
            backend_.load(path, spec_);
        } catch (const std::runtime_error& e) {
            return e.what();
        }
        return "(no error)";
    }

    std::filesystem::path dir_;
    BenchmarkSpec spec_;
    OnnxRuntimeBackend backend_;
};

TEST_F(OnnxRuntimeBackendTest, DescribesItself) {
    EXPECT_EQ(backend_.name(), "onnxruntime");
    // The version says which library runs: "1.29.0 (/path/libonnxruntime.so.1, built with)".
    EXPECT_EQ(backend_.version(), OrtRuntime::open("").description());
    EXPECT_THAT(backend_.version(), ::testing::MatchesRegex("[0-9]+\\.[0-9]+\\.[0-9]+ \\(.*libonnxruntime.*\\)"));
    const Capabilities caps = backend_.capabilities();
    EXPECT_EQ(caps.devices.front(), DeviceKind::cpu);
    EXPECT_THAT(caps.precisions, ElementsAre(Precision::fp32, Precision::fp16, Precision::int8));
    EXPECT_THAT(caps.model_formats, ElementsAre("onnx"));
    EXPECT_TRUE(caps.dynamic_batch);
    const bool gpu = std::find(caps.devices.begin(), caps.devices.end(), DeviceKind::cuda) != caps.devices.end();
    EXPECT_EQ(caps.device_timing, gpu);
    EXPECT_EQ(caps.cuda_graphs, gpu);
    EXPECT_EQ(backend_.options().size(), 23u);
    EXPECT_EQ(make_onnxruntime_backend()->name(), "onnxruntime");
}

TEST_F(OnnxRuntimeBackendTest, RunsFp32Fp16AndInt8ModelsItConverts) {
    for (Precision p : {Precision::fp32, Precision::fp16, Precision::int8}) {
        spec_.precision = p;
        EXPECT_EQ(backend_.unsupported_reason(spec_), std::nullopt) << to_string(p);
    }
    for (Precision p : {Precision::bf16, Precision::fp8}) {
        spec_.precision = p;
        EXPECT_THAT(backend_.unsupported_reason(spec_).value_or(""),
                    AllOf(HasSubstr("converts models to fp16 and int8"), HasSubstr(std::string(to_string(p)))));
    }
    spec_.precision = Precision::fp32;
    spec_.device = Device{DeviceKind::cuda, 0};
    const auto& devices = backend_.capabilities().devices;
    if (std::find(devices.begin(), devices.end(), DeviceKind::cuda) == devices.end()) {
        EXPECT_THAT(backend_.unsupported_reason(spec_).value_or(""), ::testing::StartsWith("onnxruntime on cuda:0: "));
        EXPECT_THROW(backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_), EnvironmentError);
    }
}

TEST_F(OnnxRuntimeBackendTest, GpuOptionsOnACpuCellAreASkipReason) {
    spec_.backend_options = {{"enable_cuda_graph", "true"}, {"use_tf32", "false"}};
    EXPECT_EQ(backend_.unsupported_reason(spec_),
              "onnxruntime on cpu: the option(s) enable_cuda_graph, use_tf32 apply to cuda devices only");
    spec_.backend_options = {{"enable_cuda_graph", "false"}};  // a sweep's default value runs
    EXPECT_EQ(backend_.unsupported_reason(spec_), std::nullopt);
}

TEST_F(OnnxRuntimeBackendTest, AMissingRuntimeIsACellsSkipReason) {
    spec_.backend_options = {{"runtime", (dir_ / "no-such-runtime").string()}};
    EXPECT_THAT(backend_.unsupported_reason(spec_).value_or(""),
                AllOf(::testing::StartsWith("onnxruntime on cpu: no ONNX Runtime library"), HasSubstr("no-such-runtime")));
}

TEST_F(OnnxRuntimeBackendTest, RunsOnTheGpuWithDeviceTimesWhereOneIs) {
    spec_.device = Device{DeviceKind::cuda, 0};
    if (auto reason = backend_.unsupported_reason(spec_)) GTEST_SKIP() << *reason;
    for (const bool resident : {false, true}) {
        spec_.backend_options = {{"device_resident", resident ? "true" : "false"}};
        backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
        std::vector<float> values(12);
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
        backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], values)});
        DeviceTimes times;
        backend_.infer(times);
        EXPECT_GT(times.compute_ns, 0);
        EXPECT_EQ(times.h2d_ns != kNotMeasured, !resident);
        EXPECT_EQ(times.d2h_ns != kNotMeasured, !resident);
        const auto outputs = backend_.last_outputs();
        ASSERT_EQ(outputs.size(), 1u);
        EXPECT_EQ(outputs[0].info.shape, (std::vector<std::int64_t>{3, 4}));
        std::vector<float> y(values.size());
        ASSERT_EQ(outputs[0].data.size(), y.size() * sizeof(float));
        std::memcpy(y.data(), outputs[0].data.data(), outputs[0].data.size());
        for (std::size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], 2 * values[i]) << "element " << i;
        const auto layers = backend_.profile_layers(std::atomic<std::int32_t>{0});
        EXPECT_FALSE(layers.empty()) << "a cuda cell records its placement";
    }
}

TEST_F(OnnxRuntimeBackendTest, ResolvesTheDynamicBatchDimension) {
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    const std::vector<TensorInfo> inputs = backend_.inputs();
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_EQ(inputs[0].name, "X");
    EXPECT_EQ(inputs[0].dtype, DType::f32);
    EXPECT_THAT(inputs[0].shape, ElementsAre(3, 4));
}

TEST_F(OnnxRuntimeBackendTest, InferLeavesCorrectOutputsInHostMemoryEveryTime) {
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    std::vector<float> x(12);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5.5f;
    std::vector<HostTensor> inputs{float_tensor(backend_.inputs()[0], x)};
    backend_.prepare(inputs);
    inputs.clear();  // prepare() keeps its own copy
    for (int run = 0; run < 3; ++run) {
        DeviceTimes times;
        backend_.infer(times);
        EXPECT_EQ(times.compute_ns, kNotMeasured);
        const std::vector<Ort::Value> outputs = backend_.outputs();
        ASSERT_EQ(outputs.size(), 1u);
        const auto info = outputs[0].GetTensorTypeAndShapeInfo();
        EXPECT_THAT(info.GetShape(), ElementsAre(3, 4));
        EXPECT_EQ(outputs[0].GetTensorMemoryInfo().GetDeviceType(), OrtMemoryInfoDeviceType_CPU);
        const float* y = outputs[0].GetTensorData<float>();
        for (std::size_t i = 0; i < x.size(); ++i) ASSERT_FLOAT_EQ(y[i], 2 * x[i]) << "element " << i;
    }
}

// A pipeline cell's batches: new inputs before each infer() without a new prepare(), on the CPU and, where there
// is one, on a GPU (into the pinned buffers; under device_resident on to the device), each run on the new ones.
TEST_F(OnnxRuntimeBackendTest, StagedInputsAreWhatTheNextInferRuns) {
    EXPECT_TRUE(backend_.capabilities().stages_inputs);
    std::vector<std::pair<Device, std::string>> cells = {{Device{}, "false"}};
    BenchmarkSpec gpu = spec_;
    gpu.device = Device{DeviceKind::cuda, 0};
    if (!backend_.unsupported_reason(gpu)) cells.insert(cells.end(), {{gpu.device, "false"}, {gpu.device, "true"}});
    for (const auto& [device, resident] : cells) {
        spec_.device = device;
        spec_.backend_options = {{"device_resident", resident}};
        if (device.kind == DeviceKind::cpu) spec_.backend_options.clear();
        backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
        std::vector<float> x(12, 1.0F);
        backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], x)});
        for (int batch = 0; batch < 3; ++batch) {
            for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(batch * 100) + static_cast<float>(i);
            backend_.stage_inputs(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], x)});
            DeviceTimes times;
            backend_.infer(times);
            const auto outputs = backend_.last_outputs();
            ASSERT_EQ(outputs.size(), 1u);
            std::vector<float> y(x.size());
            ASSERT_EQ(outputs[0].data.size(), y.size() * sizeof(float));
            std::memcpy(y.data(), outputs[0].data.data(), outputs[0].data.size());
            for (std::size_t i = 0; i < y.size(); ++i)
                ASSERT_FLOAT_EQ(y[i], 2 * x[i]) << to_string(device) << " batch " << batch << " element " << i;
        }
        EXPECT_THROW(backend_.stage_inputs(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], {1.0F})}),
                     std::runtime_error)
            << "a batch of another size is refused";
    }
}

// A pipeline's GPU batch on the CPU provider: refused (the caller goes through the host), no outputs on a GPU.
TEST_F(OnnxRuntimeBackendTest, TheCpuProviderTakesNoDeviceInputsAndGivesNoDeviceOutputs) {
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    std::vector<float> x(12, 1.0F);
    backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], x)});
    float device_bytes = 0;  // never read: the CPU provider refuses before touching the data
    const std::vector<DeviceTensor> on_gpu{{backend_.inputs()[0], &device_bytes, 0}};
    EXPECT_FALSE(backend_.stage_device_inputs(on_gpu));
    DeviceTimes times;
    backend_.infer(times);
    EXPECT_TRUE(backend_.last_device_outputs().empty());
}

// On a GPU, where there is one: copied device to device and run, the outputs handed back in GPU memory.
TEST_F(OnnxRuntimeBackendTest, DeviceInputsRunAndOutputsStayOnTheGpu) {
    std::vector<float> x(12, 1.0F);
    DeviceTimes times;
    spec_.device = Device{DeviceKind::cuda, 0};
    if (auto reason = backend_.unsupported_reason(spec_)) GTEST_SKIP() << *reason;
    for (const bool resident : {false, true}) {
        spec_.backend_options = {{"device_resident", resident ? "true" : "false"}};
        backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
        backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], x)});
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) + 0.5F;
        const cuda::StreamHandle stream(0);
        const cuda::Buffer input(cuda::Buffer::Kind::device, x.size() * sizeof(float));
        cuda::copy_async(input.data(), x.data(), input.size(), cuda::CopyKind::host_to_device, stream.get());
        stream.synchronize();
        ASSERT_TRUE(backend_.stage_device_inputs(std::vector<DeviceTensor>{{backend_.inputs()[0], input.data(), 0}}));
        backend_.infer(times);
        const auto outputs = backend_.last_device_outputs();
        ASSERT_EQ(outputs.size(), 1u);
        EXPECT_EQ(outputs[0].info.shape, (std::vector<std::int64_t>{3, 4}));
        std::vector<float> y(x.size());
        cuda::copy_async(y.data(), outputs[0].data, y.size() * sizeof(float), cuda::CopyKind::device_to_host,
                         stream.get());
        stream.synchronize();
        for (std::size_t i = 0; i < y.size(); ++i) EXPECT_FLOAT_EQ(y[i], 2 * x[i]) << "element " << i;
        EXPECT_FALSE(backend_.stage_device_inputs(std::vector<DeviceTensor>{{backend_.inputs()[0], input.data(), 1}}))
            << "another GPU's memory goes through the host";
    }
}

TEST_F(OnnxRuntimeBackendTest, AppliesOptions) {
    spec_.backend_options = {{"intra_op_threads", "1"}, {"inter_op_threads", "1"},
                             {"graph_optimization", "disable"}, {"execution_mode", "parallel"}};
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], std::vector<float>(12, 1.f))});
    DeviceTimes times;
    backend_.infer(times);
    EXPECT_FLOAT_EQ(backend_.outputs()[0].GetTensorData<float>()[11], 2.f);
}

TEST_F(OnnxRuntimeBackendTest, LayerProfileRunsASeparateProfiledSessionAndLeavesNoFile) {
    spec_.backend_options = {{"layer_profile", "4"}, {"graph_optimization", "disable"}};
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], std::vector<float>(12, 1.f))});
    DeviceTimes times;
    backend_.infer(times);
    // The profile goes to a private folder under TMPDIR, removed afterwards: only the model stays here.
    const char* previous = std::getenv("TMPDIR");
    const std::string saved = previous ? previous : "";
    ::setenv("TMPDIR", dir_.c_str(), 1);
    const std::atomic<std::int32_t> go{0};
    const std::vector<LayerTime> layers = backend_.profile_layers(go);
    if (previous) ::setenv("TMPDIR", saved.c_str(), 1);
    else ::unsetenv("TMPDIR");
    ASSERT_EQ(layers.size(), 1u);
    EXPECT_EQ(layers[0].op_type, "Add");
    EXPECT_EQ(layers[0].provider, "CPUExecutionProvider");
    EXPECT_EQ(layers[0].calls, 4);  // the warm-up run is left out
    EXPECT_GE(layers[0].total_ns, 0);
    std::vector<std::string> left;
    for (const auto& entry : std::filesystem::directory_iterator(dir_)) left.push_back(entry.path().filename());
    EXPECT_THAT(left, ElementsAre("add.onnx"));
    // The measured session is untouched: it still runs and gives the right outputs.
    backend_.infer(times);
    EXPECT_FLOAT_EQ(backend_.outputs()[0].GetTensorData<float>()[11], 2.f);
}

TEST_F(OnnxRuntimeBackendTest, NoLayerProfileUnlessAskedOrWhenStopped) {
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], std::vector<float>(12))});
    const std::atomic<std::int32_t> go{0}, stop{1};
    EXPECT_TRUE(backend_.profile_layers(go).empty());
    spec_.backend_options = {{"layer_profile", "2"}};
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], std::vector<float>(12))});
    EXPECT_TRUE(backend_.profile_layers(stop).empty());
    EXPECT_EQ(backend_.profile_layers(go).size(), 1u);
}

TEST_F(OnnxRuntimeBackendTest, BadOptionIsAUserError) {
    spec_.backend_options = {{"graph_optimization", "O3"}};
    EXPECT_THROW(backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_), UserError);
}

TEST_F(OnnxRuntimeBackendTest, PrepareChecksTheInputData) {
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    TensorInfo info = backend_.inputs()[0];
    EXPECT_THAT([&] { backend_.prepare(std::vector<HostTensor>{float_tensor(info, std::vector<float>(4))}); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("input X needs 48 bytes of float32, got 16")));
    info.name = "Z";
    EXPECT_THROW(backend_.prepare(std::vector<HostTensor>{float_tensor(info, std::vector<float>(12))}), std::runtime_error);
}

TEST_F(OnnxRuntimeBackendTest, FixedBatchSizeMustMatch) {
    const std::string path = write("fixed.onnx", add_model({{1, ""}, {4, ""}}));
    EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("fixed batch size of 1"),
                                        HasSubstr("export the model with a dynamic first (batch) dimension")));
    spec_.batch_size = 1;
    backend_.load(path, spec_);
    EXPECT_THAT(backend_.inputs()[0].shape, ElementsAre(1, 4));
}

TEST_F(OnnxRuntimeBackendTest, OnlyTheBatchDimensionMayBeDynamic) {
    const std::string path = write("features.onnx", add_model({{-1, "batch"}, {-1, "features"}}));
    EXPECT_THAT(load_error(path), AllOf(HasSubstr("input X"), HasSubstr("dimension 1 ('features')"),
                                        HasSubstr("static shapes")));
}

TEST_F(OnnxRuntimeBackendTest, UnsupportedElementTypeNamesInputAndType) {
    const std::string path = write("u16.onnx", one_node_model("Identity", 1, kUint16, {{-1, "batch"}, {4, ""}}));
    EXPECT_THAT(load_error(path), AllOf(HasSubstr("input X"), HasSubstr("uint16")));
}

TEST_F(OnnxRuntimeBackendTest, MissingFileIsAClearError) {
    const std::string path = (dir_ / "absent.onnx").string();
    EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("no such file")));
}

TEST_F(OnnxRuntimeBackendTest, NonOnnxFileIsAClearError) {
    const std::string path = write("notes.onnx", "name: resnet50\nthis is not a protobuf\n");
    EXPECT_THAT(load_error(path), AllOf(HasSubstr(path), HasSubstr("not a valid ONNX file")));
}

TEST_F(OnnxRuntimeBackendTest, CanLoadAgain) {
    backend_.load(write("fixed.onnx", add_model({{3, ""}, {2, ""}})), spec_);
    backend_.load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
    EXPECT_THAT(backend_.inputs()[0].shape, ElementsAre(3, 4));
}

#ifdef INFERBENCH_ONNXRUNTIME_MODULE
// The built module, as the CLI loads it: RPATH, exported entry point, exceptions across the boundary.
TEST_F(OnnxRuntimeBackendTest, ModuleEntryPointCreatesAWorkingBackend) {
    void* handle = ::dlopen(INFERBENCH_ONNXRUNTIME_MODULE, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    auto entry = reinterpret_cast<inferbench_backend_module_fn>(::dlsym(handle, INFERBENCH_BACKEND_ENTRY_POINT));
    ASSERT_NE(entry, nullptr) << ::dlerror();
    const BackendModule* module = entry();
    EXPECT_EQ(module->api_version, kBackendApiVersion);
    EXPECT_STREQ(module->name, "onnxruntime");
    {
        std::unique_ptr<Backend> backend(module->create());
        EXPECT_EQ(backend->name(), "onnxruntime");
        EXPECT_EQ(backend->version(), backend_.version());
        backend->load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_);
        backend->prepare(std::vector<HostTensor>{float_tensor(backend->inputs()[0], std::vector<float>(12))});
        DeviceTimes times;
        backend->infer(times);
        spec_.backend_options = {{"colour", "blue"}};
        EXPECT_THROW(backend->load(write("add.onnx", add_model({{-1, "batch"}, {4, ""}})), spec_), UserError);
    }
    EXPECT_EQ(::dlsym(handle, "_ZN10inferbench18OnnxRuntimeBackendC1Ev"), nullptr) << "only the entry point is exported";
    ::dlclose(handle);
}
#endif

}  // namespace
}  // namespace inferbench
