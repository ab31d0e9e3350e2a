// The TensorFlow backend run against the fake libtensorflow (fake_tf/): graph import, node lookup,
// tensor sizes, session runs, SavedModels, device configuration, error propagation, no leaks.
#include "backends/tensorflow/tensorflow_backend.hpp"

#include <dlfcn.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "backends/tensorflow/tensorflow_config.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "fake_tf_control.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// y = x + x over a [batch, 4] float placeholder.
const std::string kAddGraph = "fake-graphdef\nnode x Placeholder float ?,4\nnode y Add float ?,4 x\n";

HostTensor float_tensor(const TensorInfo& info, const std::vector<float>& values) {
    HostTensor tensor{info, std::vector<std::byte>(values.size() * sizeof(float))};
    std::memcpy(tensor.data.data(), values.data(), tensor.data.size());
    return tensor;
}

std::vector<std::int64_t> dims_of(const TF_Tensor* t) {
    std::vector<std::int64_t> dims;
    for (int d = 0; d < TF_NumDims(t); ++d) dims.push_back(TF_Dim(t, d));
    return dims;
}

class TensorFlowBackendTest : public ::testing::Test {
protected:
    TensorFlowBackendTest() {
        fake_tf::set_devices({"CPU"});
        spec_.backend = "tensorflow";
        spec_.batch_size = 3;
        spec_.backend_options = {{"outputs", "y"}};
    }
    std::string write(const std::string& name, const std::string& text) const {
        dir_.write(name, text);
        return dir_.file(name);
    }
    std::string load_error(const std::string& path) {
        try {
            backend_.load(path, spec_);
        } catch (const std::exception& e) {
            return e.what();
        }
        return "(no error)";
    }
    void load_add_graph() { backend_.load(write("add.pb", kAddGraph), spec_); }
    void prepare_iota() {
        std::vector<float> x(12);
        for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 5.5f;
        backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], x)});
    }

    testing::ScratchDir dir_;
    BenchmarkSpec spec_;
    TensorFlowBackend backend_;
};

TEST_F(TensorFlowBackendTest, DescribesItself) {
    EXPECT_EQ(backend_.name(), "tensorflow");
    EXPECT_EQ(backend_.version(), "2.16.1-fake");
    const Capabilities caps = backend_.capabilities();
    EXPECT_THAT(caps.devices, ElementsAre(DeviceKind::cpu));
    EXPECT_THAT(caps.precisions, ElementsAre(Precision::fp32));
    EXPECT_THAT(caps.model_formats, ElementsAre("pb"));
    EXPECT_FALSE(caps.device_timing);
    EXPECT_EQ(backend_.options().size(), 5u);
    EXPECT_EQ(make_tensorflow_backend()->name(), "tensorflow");
}

TEST_F(TensorFlowBackendTest, OffersCudaOnlyWhenTheLibrarySeesAGpu) {
    spec_.device = Device{DeviceKind::cuda, 0};
    EXPECT_THAT(backend_.unsupported_reason(spec_).value_or(""), AllOf(HasSubstr("no GPU support"), HasSubstr("CPU:0")));
    fake_tf::set_devices({"CPU", "GPU"});
    TensorFlowBackend with_gpu;
    EXPECT_THAT(with_gpu.capabilities().devices, ElementsAre(DeviceKind::cpu, DeviceKind::cuda));
    EXPECT_EQ(with_gpu.unsupported_reason(spec_), std::nullopt);
    spec_.device.index = 1;
    EXPECT_EQ(with_gpu.unsupported_reason(spec_), "there is no cuda:1 (TensorFlow sees 1 GPU)");
}

TEST_F(TensorFlowBackendTest, RunsTheGraphsOwnPrecisionOnly) {
    EXPECT_EQ(backend_.unsupported_reason(spec_), std::nullopt);
    spec_.precision = Precision::fp16;
    EXPECT_THAT(backend_.unsupported_reason(spec_).value_or(""),
                AllOf(HasSubstr("its own precision"), HasSubstr("fp16 needs a graph converted to fp16")));
}

TEST_F(TensorFlowBackendTest, GuessesPlaceholdersAndResolvesTheBatch) {
    load_add_graph();
    const std::vector<TensorInfo> inputs = backend_.inputs();
    ASSERT_EQ(inputs.size(), 1u);
    EXPECT_EQ(inputs[0].name, "x");
    EXPECT_EQ(inputs[0].dtype, DType::f32);
    EXPECT_THAT(inputs[0].shape, ElementsAre(3, 4));
}

TEST_F(TensorFlowBackendTest, OutputsMustBeNamedAndTheErrorSuggestsThem) {
    spec_.backend_options.clear();
    const std::string error = load_error(write("add.pb", kAddGraph + "node z Identity float 2 \n"));
    EXPECT_THAT(error, AllOf(HasSubstr("backend_options.tensorflow.outputs"), HasSubstr("whose outputs nothing consumes: y, z")));
    EXPECT_THAT(error, Not(HasSubstr("x,")));
}

TEST_F(TensorFlowBackendTest, InferFetchesCorrectOutputsEveryTime) {
    load_add_graph();
    prepare_iota();
    const int runs_before = fake_tf::counters().session_runs;
    const int tensors_before = fake_tf::counters().tensors;
    for (int run = 0; run < 3; ++run) {
        DeviceTimes times;
        backend_.infer(times);
        EXPECT_EQ(times.compute_ns, kNotMeasured);
        const std::vector<const TF_Tensor*> outputs = backend_.outputs();
        ASSERT_EQ(outputs.size(), 1u);
        EXPECT_EQ(TF_TensorType(outputs[0]), TF_FLOAT);
        EXPECT_THAT(dims_of(outputs[0]), ElementsAre(3, 4));
        ASSERT_EQ(TF_TensorByteSize(outputs[0]), 48u);
        const auto* y = static_cast<const float*>(TF_TensorData(outputs[0]));
        for (std::size_t i = 0; i < 12; ++i) ASSERT_FLOAT_EQ(y[i], 2 * (static_cast<float>(i) - 5.5f)) << i;
    }
    EXPECT_EQ(fake_tf::counters().session_runs, runs_before + 3);
    EXPECT_EQ(fake_tf::counters().tensors, tensors_before + 1) << "each run frees the last run's outputs";
}

TEST_F(TensorFlowBackendTest, ExplicitTensorNamesWithIndices) {
    spec_.backend_options = {{"inputs", "x:0"}, {"outputs", "y:0, x"}};
    load_add_graph();
    prepare_iota();
    DeviceTimes times;
    backend_.infer(times);
    const auto outputs = backend_.outputs();
    ASSERT_EQ(outputs.size(), 2u);
    EXPECT_FLOAT_EQ(static_cast<const float*>(TF_TensorData(outputs[1]))[0], -5.5f);
    EXPECT_FLOAT_EQ(static_cast<const float*>(TF_TensorData(outputs[0]))[0], -11.0f);
}

TEST_F(TensorFlowBackendTest, UnknownTensorsNameTheCandidates) {
    const std::string path = write("add.pb", kAddGraph);
    spec_.backend_options = {{"inputs", "images"}, {"outputs", "y"}};
    EXPECT_THAT(load_error(path), AllOf(HasSubstr("option inputs"), HasSubstr("no node named 'images'"),
                                        HasSubstr("Placeholder nodes: x")));
    spec_.backend_options = {{"outputs", "logits"}};
    EXPECT_THAT(load_error(path), AllOf(HasSubstr("no node named 'logits'"), HasSubstr("nothing consumes: y")));
    spec_.backend_options = {{"outputs", "y:1"}};
    EXPECT_THAT(load_error(path), HasSubstr("node 'y' of " + path + " has 1 outputs, so there is no 'y:1'"));
    EXPECT_THROW(backend_.load(path, spec_), UserError);
}

TEST_F(TensorFlowBackendTest, ImportErrorsCarryTensorFlowsMessage) {
    const std::string garbage = write("notes.pb", "this is not a GraphDef\n");
    EXPECT_THAT(load_error(garbage), AllOf(HasSubstr(garbage), HasSubstr("not a GraphDef TensorFlow can import"),
                                           HasSubstr("INVALID_ARGUMENT: Invalid GraphDef")));
    const std::string bad = write("bad.pb", "fake-graphdef\nimport_error Node 'y': Unknown input node 'q'\n");
    EXPECT_THAT(load_error(bad), HasSubstr("INVALID_ARGUMENT: Node 'y': Unknown input node 'q'"));
    EXPECT_THAT(load_error(dir_.file("absent.pb")), AllOf(HasSubstr("absent.pb"), HasSubstr("no such file")));
}

TEST_F(TensorFlowBackendTest, RunErrorsPropagateAndLeakNothing) {
    backend_.load(write("add.pb", kAddGraph + "run_error y OOM when allocating tensor\n"), spec_);
    prepare_iota();
    const int tensors_before = fake_tf::counters().tensors;
    DeviceTimes times;
    EXPECT_THAT([&] { backend_.infer(times); },
                ::testing::ThrowsMessage<std::runtime_error>(
                    AllOf(HasSubstr("TensorFlow failed to run"), HasSubstr("INTERNAL: OOM when allocating tensor"))));
    EXPECT_EQ(fake_tf::counters().tensors, tensors_before);
    EXPECT_EQ(backend_.outputs()[0], nullptr);
}

TEST_F(TensorFlowBackendTest, AnUnfedPlaceholderIsTensorFlowsError) {
    spec_.backend_options = {{"inputs", "a"}, {"outputs", "y"}};
    backend_.load(write("two.pb", "fake-graphdef\nnode a Placeholder float ?,2\nnode b Placeholder float ?,2\n"
                                  "node y Add float ?,2 b\n"),
                  spec_);
    backend_.prepare(std::vector<HostTensor>{float_tensor(backend_.inputs()[0], std::vector<float>(6))});
    DeviceTimes times;
    EXPECT_THAT([&] { backend_.infer(times); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr(
                    "You must feed a value for placeholder tensor 'b' with dtype float and shape [?,2]")));
}

TEST_F(TensorFlowBackendTest, OnlyTheBatchDimensionMayBeUnknown) {
    EXPECT_THAT(load_error(write("r.pb", "fake-graphdef\nnode x Placeholder float *\nnode y Add float * x\n")),
                AllOf(HasSubstr("input x"), HasSubstr("unknown shape")));
    EXPECT_THAT(load_error(write("d.pb", "fake-graphdef\nnode x Placeholder float ?,?\nnode y Add float ?,? x\n")),
                AllOf(HasSubstr("dynamic dimension 1"), HasSubstr("static shapes")));
    EXPECT_THAT(load_error(write("f.pb", "fake-graphdef\nnode x Placeholder float 1,4\nnode y Add float 1,4 x\n")),
                AllOf(HasSubstr("fixed batch size of 1"), HasSubstr("batch size 3")));
    backend_.load(write("s.pb", "fake-graphdef\nnode x Placeholder float -\nnode y Add float - x\n"), spec_);
    EXPECT_TRUE(backend_.inputs()[0].shape.empty()) << "a scalar input has no batch dimension";
}

TEST_F(TensorFlowBackendTest, UnfeedableTypesAreNamed) {
    EXPECT_THAT(load_error(write("s.pb", "fake-graphdef\nnode x Placeholder string ?\nnode y Identity string ? x\n")),
                AllOf(HasSubstr("input x"), HasSubstr("element type string")));
}

TEST_F(TensorFlowBackendTest, PrepareChecksTheInputData) {
    load_add_graph();
    TensorInfo info = backend_.inputs()[0];
    EXPECT_THAT([&] { backend_.prepare(std::vector<HostTensor>{float_tensor(info, std::vector<float>(4))}); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("input x needs 48 bytes of float32, got 16")));
    info.name = "z";
    EXPECT_THAT([&] { backend_.prepare(std::vector<HostTensor>{float_tensor(info, std::vector<float>(12))}); },
                ::testing::ThrowsMessage<std::runtime_error>(HasSubstr("no data for input x")));
    DeviceTimes times;
    EXPECT_THROW(backend_.infer(times), std::logic_error);
}

TEST_F(TensorFlowBackendTest, SessionConfigFollowsTheDeviceAndOptions) {
    spec_.backend_options = {{"outputs", "y"}, {"intra_op_threads", "2"}};
    load_add_graph();
    SessionConfig cpu;
    cpu.hide_gpus = true;
    cpu.intra_op_threads = 2;
    EXPECT_EQ(fake_tf::last_config(), encode_config_proto(cpu));

    fake_tf::set_devices({"CPU", "GPU", "GPU"});
    spec_.device = Device{DeviceKind::cuda, 1};
    spec_.backend_options = {{"outputs", "y"}};
    load_add_graph();
    SessionConfig gpu;
    gpu.visible_gpu = 1;
    EXPECT_EQ(fake_tf::last_config(), encode_config_proto(gpu));
}

TEST_F(TensorFlowBackendTest, ACudaCellWithoutAGpuFailsClearly) {
    spec_.device = Device{DeviceKind::cuda, 0};
    EXPECT_THROW(load_add_graph(), EnvironmentError);
    EXPECT_THAT(load_error(write("add.pb", kAddGraph)), HasSubstr("TensorFlow sees no GPU for cuda:0"));
}

TEST_F(TensorFlowBackendTest, LoadsASavedModelByFolderOrFile) {
    const std::filesystem::path model = dir_.path() / "resnet";
    std::filesystem::create_directories(model);
    dir_.write("resnet/saved_model.pb", kAddGraph + "tags serve\n");
    backend_.load(model.string(), spec_);
    EXPECT_EQ(fake_tf::last_export_dir(), model.string());
    EXPECT_THAT(fake_tf::last_tags(), ElementsAre("serve"));
    EXPECT_THAT(backend_.inputs()[0].shape, ElementsAre(3, 4));
    backend_.load((model / "saved_model.pb").string(), spec_);
    EXPECT_EQ(fake_tf::last_export_dir(), model.string());
    prepare_iota();
    DeviceTimes times;
    backend_.infer(times);
    EXPECT_FLOAT_EQ(static_cast<const float*>(TF_TensorData(backend_.outputs()[0]))[11], 11.0f);
}

TEST_F(TensorFlowBackendTest, SavedModelErrorsCarryTensorFlowsMessage) {
    const std::filesystem::path model = dir_.path() / "m";
    std::filesystem::create_directories(model);
    EXPECT_THAT(load_error(model.string()), AllOf(HasSubstr("cannot load TensorFlow SavedModel"),
                                                  HasSubstr("SavedModel file does not exist")));
    dir_.write("m/saved_model.pb", kAddGraph + "tags serve\n");
    spec_.backend_options = {{"outputs", "y"}, {"tags", "serve,tpu"}};
    EXPECT_THAT(load_error(model.string()), AllOf(HasSubstr("tags serve,tpu"), HasSubstr("NOT_FOUND: Could not find meta "
                                                                                          "graph def matching supplied tags")));
}

TEST_F(TensorFlowBackendTest, CanLoadAgain) {
    backend_.load(write("fixed.pb", "fake-graphdef\nnode x Placeholder float 3,2\nnode y Add float 3,2 x\n"), spec_);
    load_add_graph();
    EXPECT_THAT(backend_.inputs()[0].shape, ElementsAre(3, 4));
}

TEST(TensorFlowBackendLifetime, EveryTensorFlowObjectIsFreedAndEverySessionClosed) {
    const fake_tf::Counters before = fake_tf::counters();
    {
        testing::ScratchDir dir;
        dir.write("add.pb", kAddGraph);
        BenchmarkSpec spec;
        spec.batch_size = 2;
        spec.backend_options = {{"outputs", "y"}};
        TensorFlowBackend backend;
        backend.capabilities();
        backend.load(dir.file("add.pb"), spec);
        backend.load(dir.file("add.pb"), spec);
        backend.prepare(std::vector<HostTensor>{float_tensor(backend.inputs()[0], std::vector<float>(8))});
        DeviceTimes times;
        backend.infer(times);
        backend.infer(times);
    }
    const fake_tf::Counters after = fake_tf::counters();
    EXPECT_EQ(after.graphs, before.graphs);
    EXPECT_EQ(after.sessions, before.sessions);
    EXPECT_EQ(after.sessions_open, before.sessions_open);
    EXPECT_EQ(after.tensors, before.tensors);
    EXPECT_EQ(after.statuses, before.statuses);
    EXPECT_EQ(after.buffers, before.buffers);
    EXPECT_EQ(after.session_options, before.session_options);
    EXPECT_EQ(after.import_options, before.import_options);
    EXPECT_EQ(after.device_lists, before.device_lists);
}

// The module, as the CLI loads it (here linked against the fake library): entry point, exceptions
// across the boundary, only the entry point exported.
TEST(TensorFlowBackendModule, EntryPointCreatesAWorkingBackend) {
    void* handle = ::dlopen(INFERBENCH_TENSORFLOW_FAKE_MODULE, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << ::dlerror();
    auto entry = reinterpret_cast<inferbench_backend_module_fn>(::dlsym(handle, INFERBENCH_BACKEND_ENTRY_POINT));
    ASSERT_NE(entry, nullptr) << ::dlerror();
    const BackendModule* module = entry();
    EXPECT_EQ(module->api_version, kBackendApiVersion);
    EXPECT_STREQ(module->name, "tensorflow");
    {
        testing::ScratchDir dir;
        dir.write("add.pb", kAddGraph);
        BenchmarkSpec spec;
        spec.backend_options = {{"outputs", "y"}};
        std::unique_ptr<Backend> backend(module->create());
        EXPECT_EQ(backend->version(), "2.16.1-fake");
        backend->load(dir.file("add.pb"), spec);
        backend->prepare(std::vector<HostTensor>{float_tensor(backend->inputs()[0], std::vector<float>(4))});
        DeviceTimes times;
        backend->infer(times);
        spec.backend_options = {{"colour", "blue"}};
        EXPECT_THROW(backend->load(dir.file("add.pb"), spec), UserError);
    }
    EXPECT_EQ(::dlsym(handle, "_ZN10inferbench23make_tensorflow_backendEv"), nullptr) << "only the entry point is exported";
    ::dlclose(handle);
}

}  // namespace
}  // namespace inferbench
