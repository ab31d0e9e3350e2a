// A pipeline cell's GPU stages in the worker (runner/worker/pipeline_gpu): which cells are skipped and why, the
// same answer for `run --dry-run` and the run (both ask pipeline_cell_problem; the worker opens the stages
// itself), the hand-off of a GPU batch to a backend that takes it or refuses it, and which outputs the GPU
// decodes. This machine has no GPU: the GPU stages cannot open here, so the cells that pass every other rule are
// skipped with GpuStages::open's own reason.
#include <cstdlib>
#include <cstring>

#include <gtest/gtest.h>

#include "backends/registry.hpp"
#include "core/error.hpp"
#include "runner/worker/pipeline_batches.hpp"
#include "runner/worker/pipeline_cell.hpp"
#include "runner/worker/pipeline_gpu.hpp"

namespace inferbench::runner {
namespace {

BenchmarkSpec gpu_cell(const std::string& model, StagePlace pre, StagePlace post) {
    BenchmarkSpec spec;
    spec.model = model;
    spec.backend = "onnxruntime";
    spec.device = Device{DeviceKind::cuda, 0};
    spec.batch_size = 2;
    spec.pipeline.images = std::string(kSyntheticImages);
    spec.pipeline.preprocess = pre;
    spec.pipeline.postprocess = post;
    return spec;
}

std::string unavailable_here() {
    pipeline::GpuStagesOptions options;
    options.device = 0;
    return pipeline::GpuStages::open(options).unavailable;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(PipelineGpuProblem, ACellWithoutGpuStagesOrOnAnotherDeviceIsNotJudgedHere) {
    EXPECT_EQ(pipeline_gpu_problem(gpu_cell("resnet50", StagePlace::cpu, StagePlace::cpu)), std::nullopt);
    BenchmarkSpec on_cpu = gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu);
    on_cpu.device = Device{DeviceKind::cpu, 0};
    EXPECT_EQ(pipeline_gpu_problem(on_cpu), std::nullopt) << "backends/registry's pipeline_problem says why";
    BenchmarkSpec no_pipeline = gpu_cell("resnet50", StagePlace::gpu, StagePlace::gpu);
    no_pipeline.pipeline.images.clear();
    EXPECT_EQ(pipeline_gpu_problem(no_pipeline), std::nullopt);
}

TEST(PipelineGpuProblem, TheRegistrySkipsGpuStagesOnACpuDeviceAndLeavesACudaCellToTheGpuRule) {
    Capabilities caps;
    caps.devices = {DeviceKind::cpu, DeviceKind::cuda};
    caps.stages_inputs = true;
    BenchmarkSpec on_cpu = gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu);
    on_cpu.device = Device{DeviceKind::cpu, 0};
    const auto cpu_reason = pipeline_problem(caps, "onnxruntime", on_cpu);
    ASSERT_TRUE(cpu_reason.has_value());
    EXPECT_TRUE(contains(*cpu_reason, "this cell runs on cpu")) << *cpu_reason;
    EXPECT_EQ(pipeline_problem(caps, "onnxruntime", gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu)),
              std::nullopt);
}

TEST(PipelineGpuProblem, PostProcessingTheGpuDoesNotDoIsSkippedWithItsReason) {
    const auto classifier = pipeline_gpu_problem(gpu_cell("resnet50", StagePlace::cpu, StagePlace::gpu));
    ASSERT_TRUE(classifier.has_value());
    EXPECT_TRUE(contains(*classifier, "post-processing softmax_topk runs on the CPU only")) << *classifier;
    const auto yolo = pipeline_gpu_problem(gpu_cell("yolov3", StagePlace::gpu, StagePlace::gpu));
    ASSERT_TRUE(yolo.has_value());
    EXPECT_TRUE(contains(*yolo, "post-processing yolo_boxes runs on the CPU only")) << *yolo;
    EXPECT_TRUE(contains(*yolo, "pipeline.postprocess: cpu")) << *yolo;
    // A user's model with its steps: judged by them before its graph is read.
    BenchmarkSpec user = gpu_cell("/models/mine.onnx", StagePlace::cpu, StagePlace::gpu);
    user.pipeline.steps = PipelineSteps{};
    user.pipeline.steps->post = PostProcess::argmax;
    const auto argmax = pipeline_gpu_problem(user);
    ASSERT_TRUE(argmax.has_value());
    EXPECT_TRUE(contains(*argmax, "post-processing argmax")) << *argmax;
}

TEST(PipelineGpuProblem, PngImagesCannotBeDecodedOnTheGpu) {
    BenchmarkSpec png = gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu);
    png.pipeline.image_format = ImageFormat::png;
    const auto reason = pipeline_gpu_problem(png);
    ASSERT_TRUE(reason.has_value());
    EXPECT_TRUE(contains(*reason, "decodes JPEG only")) << *reason;
}

TEST(PipelineGpuProblem, WithoutTheGpuStagesTheCellIsSkippedWithGpuStagesOwnReason) {
    const std::string unavailable = unavailable_here();
    ASSERT_FALSE(unavailable.empty()) << "this test expects a machine without a GPU";
    for (const auto& spec :
         {gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu), gpu_cell("yolov3", StagePlace::gpu, StagePlace::cpu),
          gpu_cell("ssd-mobilenet", StagePlace::cpu, StagePlace::gpu),
          gpu_cell("ssd-mobilenet", StagePlace::gpu, StagePlace::gpu)}) {
        SCOPED_TRACE(spec.model);
        EXPECT_EQ(pipeline_gpu_problem(spec), unavailable);
        // The dry run's and the run's skip (both ask pipeline_cell_problem after cell_problem).
        EXPECT_EQ(pipeline_cell_problem(spec), unavailable);
    }
}

TEST(KeepGpuDecodable, AFoldersPngFilesAreLeftOutWithALineEachAndNoneLeftIsAnError) {
    pipeline::ImageSet set;
    set.images.push_back({"a.jpg", {0xFF, 0xD8, 0xFF, 0xE0, 0, 0}});
    set.images.push_back({"b.png", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0}});
    set.images.push_back({"c.jpg", {0xFF, 0xD8, 0xFF, 0xDB, 0, 0}});
    keep_gpu_decodable(set, "/photos");
    ASSERT_EQ(set.images.size(), 2u);
    EXPECT_EQ(set.images[0].name, "a.jpg");
    EXPECT_EQ(set.images[1].name, "c.jpg");
    ASSERT_EQ(set.skipped.size(), 1u);
    EXPECT_TRUE(contains(set.skipped[0], "b.png: not a JPEG file")) << set.skipped[0];
    pipeline::ImageSet pngs;
    pngs.images.push_back({"d.png", {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n', 0}});
    EXPECT_THROW(keep_gpu_decodable(pngs, "/photos"), UserError);
}

// Sets an environment variable for one test.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::string& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        setenv(name, value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old_)
            setenv(name_, old_->c_str(), 1);
        else
            unsetenv(name_);
    }

private:
    const char* name_;
    std::optional<std::string> old_;
};

TEST(PipelineGpuProblem, NoModuleIsSaidAsSuch) {
    const ScopedEnv module("INFERBENCH_PIPELINE_CUDA_MODULE", "/nonexistent/libinferbench_pipeline_cuda.so");
    const auto reason = pipeline_cell_problem(gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu));
    ASSERT_TRUE(reason.has_value());
    EXPECT_TRUE(contains(*reason, "no GPU pipeline stages module")) << *reason;
    EXPECT_TRUE(contains(*reason, "/nonexistent/libinferbench_pipeline_cuda.so: not there")) << *reason;
}

#ifdef PIPELINE_CUDA_MODULE
TEST(PipelineGpuProblem, TheModuleWithoutAGpuIsSaidAsSuch) {
    const ScopedEnv module("INFERBENCH_PIPELINE_CUDA_MODULE", PIPELINE_CUDA_MODULE);
    const auto reason = pipeline_cell_problem(gpu_cell("ssd-mobilenet", StagePlace::gpu, StagePlace::gpu));
    ASSERT_TRUE(reason.has_value()) << "this test expects a machine without a GPU";
    EXPECT_TRUE(contains(*reason, "GPU stages cannot run on cuda:0")) << *reason;
}
#endif

// A backend with resnet50's input that records how its inputs came.
class HandoffBackend final : public Backend {
public:
    explicit HandoffBackend(bool takes_device) : takes_device_(takes_device) {}
    std::string name() const override { return "handoff"; }
    std::string version() const override { return "test"; }
    Capabilities capabilities() const override {
        Capabilities caps;
        caps.devices = {DeviceKind::cuda};
        caps.stages_inputs = true;
        return caps;
    }
    void load(const std::string& /*model_path*/, const BenchmarkSpec& /*spec*/) override {}
    std::vector<TensorInfo> inputs() const override { return {{"images", DType::f32, {2, 3, 224, 224}}}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& /*times*/) override {}
    void stage_inputs(std::span<const HostTensor> inputs) override {
        ++host_stagings;
        host_bytes = inputs.front().data;
    }
    bool stage_device_inputs(std::span<const DeviceTensor> inputs) override {
        given = std::vector<DeviceTensor>(inputs.begin(), inputs.end());
        return takes_device_;
    }
    bool takes_device_;
    int host_stagings = 0;
    std::vector<std::byte> host_bytes;
    std::vector<DeviceTensor> given;
};

TEST(StageGpuBatch, ABackendThatTakesGpuMemoryGetsTheBatchWithoutACopy) {
    HandoffBackend backend(true);
    HostTensor host{backend.inputs().front(), {}};
    int device_memory = 0;
    int copies = 0;
    const InputHandoff handoff =
        stage_gpu_batch(backend, &device_memory, 3, host, [&](std::span<std::byte>) { ++copies; });
    EXPECT_FALSE(handoff.through_host);
    EXPECT_EQ(handoff.copy_ns, 0);
    EXPECT_EQ(copies, 0);
    EXPECT_EQ(backend.host_stagings, 0);
    ASSERT_EQ(backend.given.size(), 1u);
    EXPECT_EQ(backend.given[0].data, &device_memory);
    EXPECT_EQ(backend.given[0].device, 3);
    EXPECT_EQ(backend.given[0].info.shape, (std::vector<std::int64_t>{2, 3, 224, 224}));
}

TEST(StageGpuBatch, ABackendThatRefusesGetsTheBatchThroughTheHostTheCopyTimed) {
    HandoffBackend backend(false);
    HostTensor host{backend.inputs().front(), {}};
    int device_memory = 0;
    std::size_t copied = 0;
    const InputHandoff handoff = stage_gpu_batch(backend, &device_memory, 0, host, [&](std::span<std::byte> out) {
        copied = out.size();
        std::memset(out.data(), 7, out.size());
    });
    EXPECT_TRUE(handoff.through_host);
    EXPECT_GE(handoff.copy_ns, 0);
    EXPECT_EQ(copied, host.info.byte_size());
    ASSERT_EQ(backend.host_stagings, 1);
    ASSERT_EQ(backend.host_bytes.size(), host.info.byte_size());
    EXPECT_EQ(backend.host_bytes.back(), std::byte{7}) << "the copied bytes are what the backend got";
}

TEST(DeviceSsdOutputs, TheGpuDecodesTwoFloat32OutputsInGpuMemoryElseTheHostOutputs) {
    int a = 0, b = 0;
    const TensorInfo boxes{"boxes", DType::f32, {1, 1917, 4}};
    const TensorInfo logits{"class_logits", DType::f32, {1, 1917, 91}};
    const std::vector<DeviceTensor> both{{boxes, &a, 0}, {logits, &b, 0}};
    const auto found = device_ssd_outputs(both);
    ASSERT_TRUE(found.has_value());
    EXPECT_EQ(found->locs->data, &a);
    EXPECT_EQ(found->scores->data, &b);
    EXPECT_FALSE(device_ssd_outputs({}).has_value()) << "a backend without GPU outputs";
    EXPECT_FALSE(device_ssd_outputs(std::vector<DeviceTensor>{{boxes, &a, 0}}).has_value());
    TensorInfo half = logits;
    half.dtype = DType::f16;
    EXPECT_FALSE(device_ssd_outputs(std::vector<DeviceTensor>{{boxes, &a, 0}, {half, &b, 0}}).has_value());
    EXPECT_FALSE(device_ssd_outputs(std::vector<DeviceTensor>{{boxes, &a, 0}, {logits, nullptr, 0}}).has_value());
}

TEST(PipelineBatchesOnGpu, TheWorkerRefusesACellWhoseGpuStagesCannotOpenWithTheSameReason) {
    HandoffBackend backend(true);
    const BenchmarkSpec spec = gpu_cell("resnet50", StagePlace::gpu, StagePlace::cpu);
    try {
        PipelineBatches batches(backend, spec, *pipeline::zoo_pipeline("resnet50"), pipeline::ImageSet{});
        FAIL() << "the GPU stages opened on a machine without a GPU";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(std::string(e.what()), unavailable_here());
    }
}

}  // namespace
}  // namespace inferbench::runner
