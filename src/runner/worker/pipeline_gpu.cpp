#include "runner/worker/pipeline_gpu.hpp"

#include <map>
#include <mutex>
#include <utility>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/postprocess.hpp"
#include "runner/worker/pipeline_cell.hpp"

namespace inferbench::runner {
namespace {

bool has_gpu_stage(const PipelineSettings& pipeline) {
    return pipeline.preprocess == StagePlace::gpu || pipeline.postprocess == StagePlace::gpu;
}

// What the GPU post-processing is judged by before the model's graph is read: a zoo model's pipeline, or a user's
// steps; nothing for a user's ssd_boxes model, whose box coding its graph tells (the worker judges it).
std::optional<pipeline::ModelPipeline> judged_pipeline(const BenchmarkSpec& spec) {
    if (auto zoo = pipeline::zoo_pipeline(spec.model)) return zoo;
    if (!spec.pipeline.steps || spec.pipeline.steps->post == PostProcess::ssd_boxes) return std::nullopt;
    return pipeline::ModelPipeline{*spec.pipeline.steps, {}, ""};
}

// GpuStages::open's answer for a device, asked once per device and module path in this process: the stages are
// closed again at once (the worker opens its own).
std::string gpu_stages_unavailable(int device) {
    static std::mutex mutex;
    static std::map<std::pair<int, std::string>, std::string> answers;
    std::string where;
    for (const auto& path : pipeline::GpuStages::default_module_candidates()) where += path.string() + ";";
    const std::lock_guard lock(mutex);
    const auto key = std::make_pair(device, where);
    if (auto found = answers.find(key); found != answers.end()) return found->second;
    pipeline::GpuStagesOptions options;
    options.device = device;
    std::string unavailable = pipeline::GpuStages::open(options).unavailable;
    answers.emplace(key, unavailable);
    return unavailable;
}

}  // namespace

std::optional<std::string> pipeline_gpu_problem(const BenchmarkSpec& spec) {
    const PipelineSettings& settings = spec.pipeline;
    if (!settings.active() || !has_gpu_stage(settings) || spec.device.kind != DeviceKind::cuda) return std::nullopt;
    if (settings.preprocess == StagePlace::gpu && settings.images == kSyntheticImages &&
        settings.image_format == ImageFormat::png)
        return std::string(
            "pipeline.preprocess gpu decodes JPEG only (nvJPEG), and this cell's images are PNG; set "
            "pipeline.image_format: jpeg or pipeline.preprocess: cpu");
    if (settings.postprocess == StagePlace::gpu) {
        if (const auto model = judged_pipeline(spec))
            if (auto reason = pipeline::gpu_postprocess_problem(model->steps, model->head)) return reason;
    }
    if (std::string unavailable = gpu_stages_unavailable(spec.device.index); !unavailable.empty()) return unavailable;
    return std::nullopt;
}

std::optional<std::string> pipeline_cell_problem(const BenchmarkSpec& spec) {
    if (auto reason = pipeline_model_problem(spec)) return reason;
    return pipeline_gpu_problem(spec);
}

std::unique_ptr<pipeline::GpuStages> open_cell_gpu_stages(const BenchmarkSpec& spec) {
    pipeline::GpuStagesOptions options;
    options.device = spec.device.index;
    pipeline::GpuStagesOpening opening = pipeline::GpuStages::open(options);
    if (!opening.stages) throw EnvironmentError(opening.unavailable);
    return std::move(opening.stages);
}

void keep_gpu_decodable(pipeline::ImageSet& set, const std::string& images) {
    std::vector<pipeline::EncodedImage> kept;
    for (pipeline::EncodedImage& image : set.images) {
        if (pipeline::sniff_image_format(image.bytes) == ImageFormat::jpeg)
            kept.push_back(std::move(image));
        else
            set.skipped.push_back(image.name + ": not a JPEG file: pipeline.preprocess gpu decodes JPEG only (nvJPEG)");
    }
    set.images = std::move(kept);
    if (set.images.empty())
        throw UserError(
            fmt::format("{}: no JPEG image for the GPU's decoder (nvJPEG); set pipeline.preprocess: cpu", images));
}

InputHandoff stage_gpu_batch(Backend& backend, void* device_batch, int device, HostTensor& host,
                             const std::function<void(std::span<std::byte>)>& copy_to_host) {
    const DeviceTensor tensor{host.info, device_batch, device};
    if (backend.stage_device_inputs(std::span<const DeviceTensor>(&tensor, 1))) return {};
    const std::int64_t start = monotonic_ns();
    host.data.resize(host.info.byte_size());
    copy_to_host(host.data);
    InputHandoff handoff{true, monotonic_ns() - start};
    backend.stage_inputs(std::span<const HostTensor>(&host, 1));
    return handoff;
}

std::optional<DeviceSsdOutputs> device_ssd_outputs(std::span<const DeviceTensor> outputs) {
    if (outputs.size() != 2) return std::nullopt;
    for (const DeviceTensor& output : outputs)
        if (output.info.dtype != DType::f32 || output.data == nullptr) return std::nullopt;
    return DeviceSsdOutputs{&outputs[0], &outputs[1]};
}

GpuSsdPostprocess::GpuSsdPostprocess(const pipeline::GpuStages& gpu, const pipeline::ModelPipeline& model)
    : gpu_(gpu), model_(model) {
    if (auto reason = pipeline::gpu_postprocess_problem(model.steps, model.head)) throw UserError(*reason);
    priors_ = model.head.coding == pipeline::BoxCoding::ssd_tf_anchors
                  ? pipeline::ssd_mobilenet_priors(model.steps.input_size.width)
                  : pipeline::ssd_resnet34_priors();
}

// TF's SSD: class_logits [b, anchors, classes]; MLPerf's SSD-ResNet34: confs [b, classes, boxes].
std::int64_t GpuSsdPostprocess::classes(const TensorInfo& scores) const {
    if (scores.shape.size() != 3)
        throw UserError(
            fmt::format("SSD scores {} are not of rank 3; the GPU decodes [b, anchors, classes] or "
                        "[b, classes, boxes]",
                        scores.name));
    return model_.head.coding == pipeline::BoxCoding::ssd_tf_anchors ? scores.shape[2] : scores.shape[1];
}

std::vector<std::vector<pipeline::Detection>> GpuSsdPostprocess::run(const DeviceSsdOutputs& outputs,
                                                                     std::int64_t batch) const {
    const PipelineSteps& s = model_.steps;
    return gpu_.ssd_detect(model_.head.coding, priors_, classes(outputs.scores->info), s.input_size, s.score_threshold,
                           s.iou_threshold, static_cast<int>(s.max_detections), outputs.locs->data,
                           outputs.locs->info.byte_size(), outputs.scores->data, outputs.scores->info.byte_size(),
                           static_cast<int>(batch));
}

std::vector<std::vector<pipeline::Detection>> GpuSsdPostprocess::run(std::span<const HostTensor> outputs,
                                                                     std::int64_t batch) {
    if (outputs.size() != 2 || outputs[0].info.dtype != DType::f32 || outputs[1].info.dtype != DType::f32)
        throw UserError(
            "the GPU decodes SSD boxes from the model's two float32 outputs (locations, scores); "
            "set pipeline.postprocess: cpu for this model");
    const auto upload = [&](pipeline::GpuBuffer& buffer, const HostTensor& host) {
        if (buffer.bytes() < host.data.size()) buffer = gpu_.allocate(host.data.size());
        gpu_.copy_to_device(buffer, host.data);
    };
    upload(locs_, outputs[0]);
    upload(scores_, outputs[1]);
    const PipelineSteps& s = model_.steps;
    return gpu_.ssd_detect(model_.head.coding, priors_, classes(outputs[1].info), s.input_size, s.score_threshold,
                           s.iou_threshold, static_cast<int>(s.max_detections), locs_.get(), outputs[0].data.size(),
                           scores_.get(), outputs[1].data.size(), static_cast<int>(batch));
}

}  // namespace inferbench::runner
