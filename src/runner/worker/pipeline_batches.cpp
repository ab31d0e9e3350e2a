#include "runner/worker/pipeline_batches.hpp"

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/error.hpp"
#include "models/onnx_reader.hpp"
#include "pipeline/stage_timer.hpp"

namespace inferbench::runner {
namespace {

// The element type normalise writes, from the model's declared input: what the backend is fed decides it.
std::optional<PixelType> pixel_type_of(DType dtype) {
    switch (dtype) {
        case DType::f32: return PixelType::f32;
        case DType::f16: return PixelType::f16;
        case DType::u8: return PixelType::u8;
        default: return std::nullopt;
    }
}

// The model's one image input, at the cell's batch size, whose bytes the steps fill exactly.
TensorInfo image_input(const std::vector<TensorInfo>& inputs, const BenchmarkSpec& spec, PipelineSteps& steps) {
    if (inputs.size() != 1)
        throw UserError(fmt::format("model {} has {} inputs; an image pipeline feeds a model with one image input",
                                    spec.model, inputs.size()));
    const TensorInfo& info = inputs.front();
    const auto pixel = pixel_type_of(info.dtype);
    if (!pixel)
        throw UserError(fmt::format("input {} of model {} is {}; an image pipeline writes float32, float16 or uint8",
                                    info.name, spec.model, to_string(info.dtype)));
    steps.pixel_type = *pixel;
    const std::size_t wanted = static_cast<std::size_t>(spec.batch_size) * pipeline::image_slot_bytes(steps);
    if (info.byte_size() != wanted)
        throw UserError(fmt::format("input {} of model {} holds {} bytes at batch {}, but {} images of {} take {}; "
                                    "give the model's input size in pipeline.steps.input_size",
                                    info.name, spec.model, info.byte_size(), spec.batch_size, spec.batch_size,
                                    to_string(steps.input_size), wanted));
    return info;
}

PipelineStageTime stage_time(PipelineStage stage, StagePlace place, const pipeline::StageSpan& span,
                             std::int64_t images) {
    return {0, stage, place, span.start_ns, span.end_ns, span.cpu_ns, images};
}

bool has_boxes(const PipelineSteps& steps) {
    return steps.post == PostProcess::ssd_boxes || steps.post == PostProcess::yolo_boxes;
}

}  // namespace

pipeline::ModelPipeline cell_pipeline(const BenchmarkSpec& spec, const std::string& model_path) {
    if (auto zoo = pipeline::zoo_pipeline(spec.model)) return *zoo;
    if (const std::string reason = pipeline::no_pipeline_reason(spec.model); !reason.empty()) throw UserError(reason);
    if (!spec.pipeline.steps)
        throw UserError(fmt::format("model {} is not a zoo model with a pipeline: give its steps in pipeline.steps "
                                    "(resize, input_size, mean, std, post)",
                                    spec.model));
    return pipeline::user_pipeline(spec.model, *spec.pipeline.steps,
                                   models::onnx::read_onnx_signature(std::filesystem::path(model_path)));
}

pipeline::ImageSet usable_images(const BenchmarkSpec& spec) {
    pipeline::ImageSet set = pipeline::load_images(spec.pipeline, spec.model_cache_dir);
    const std::size_t found = set.images.size() + set.skipped.size();
    std::vector<pipeline::EncodedImage> kept;
    pipeline::RgbImage scratch;
    for (pipeline::EncodedImage& image : set.images) {
        try {
            pipeline::decode_image(image.bytes, image.name, scratch);
            kept.push_back(std::move(image));
        } catch (const pipeline::ImageError& e) {
            set.skipped.emplace_back(e.what());
        }
    }
    set.images = std::move(kept);
    if (set.images.empty())
        throw UserError(fmt::format("{}: no image left to feed the model ({} of {} files skipped)", spec.pipeline.images,
                                    set.skipped.size(), found));
    return set;
}

void PipelineBatch::waited_until(std::int64_t now_ns) {
    if (left_stage_ns > 0 && now_ns > left_stage_ns) queue_ns += now_ns - left_stage_ns;
}

PipelineBatches::PipelineBatches(Backend& backend, const BenchmarkSpec& spec, pipeline::ModelPipeline model,
                                 pipeline::ImageSet images, std::unique_ptr<pipeline::GpuStages> gpu)
    : backend_(backend),
      model_(std::move(model)),
      images_(std::move(images)),
      input_info_(image_input(backend.inputs(), spec, model_.steps)),
      batch_size_(spec.batch_size),
      infer_place_(spec.device.kind == DeviceKind::cuda ? StagePlace::gpu : StagePlace::cpu),
      pool_(static_cast<std::size_t>(spec.pipeline.threads)),
      gpu_(std::move(gpu)),
      device_index_(spec.device.index) {
    scratch_.workers.resize(pool_.size());
    chosen_.resize(static_cast<std::size_t>(batch_size_));
}

PipelineBatch PipelineBatches::make_batch() const {
    PipelineBatch batch;
    batch.input.push_back(HostTensor{input_info_, std::vector<std::byte>(input_info_.byte_size())});
    if (gpu_) batch.device_input = gpu_->allocate(input_info_.byte_size());
    batch.stages.reserve(std::size(kPipelineStages));
    return batch;
}

void PipelineBatches::preprocess(std::int64_t number, PipelineBatch& batch) {
    batch.number = number;
    batch.stages.clear();
    batch.queue_ns = 0;
    batch.device = {};
    const pipeline::StageTimer read;
    const auto count = static_cast<std::int64_t>(images_.images.size());
    for (std::int64_t i = 0; i < batch_size_; ++i)
        chosen_[static_cast<std::size_t>(i)] = &images_.images[static_cast<std::size_t>((number * batch_size_ + i) % count)];
    batch.stages.push_back(stage_time(PipelineStage::read, StagePlace::cpu, read.stop(), batch_size_));
    pipeline::PreprocessedBatch done;
    if (gpu_) {
        const std::lock_guard lock(gpu_mutex_);
        done = pipeline::gpu_preprocess_batch(*gpu_, chosen_, model_.steps, batch.device_input);
    } else {
        done = pipeline::preprocess_batch(pool_, chosen_, model_.steps, batch.input.front().data, scratch_);
    }
    failed_ += static_cast<std::int64_t>(done.failures.size());
    // On the GPU the normalisation is part of the resize's pass: it has no span of its own (images 0).
    for (const PipelineStageTime& stage : {done.decode, done.resize, done.normalize})
        if (stage.images > 0) batch.stages.push_back(stage);
    batch.left_stage_ns = batch.stages.back().end_ns;
}

void PipelineBatches::stage_batch(PipelineBatch& batch) {
    if (!gpu_) {
        backend_.stage_inputs(batch.input);
        return;
    }
    const DeviceTensor tensor{input_info_, batch.device_input.get(), device_index_};
    if (backend_.stage_device_inputs(std::span(&tensor, 1))) return;
    {
        const std::lock_guard lock(gpu_mutex_);
        gpu_->copy_to_host(batch.input.front().data, batch.device_input);
    }
    backend_.stage_inputs(batch.input);
}

void PipelineBatches::infer(PipelineBatch& batch) {
    batch.waited_until(monotonic_ns());
    const pipeline::StageTimer timer;
    stage_batch(batch);
    backend_.infer(batch.device);
    batch.outputs = backend_.last_outputs();
    pipeline::StageSpan span = timer.stop();
    // The backend computes on threads (or a GPU) of its own: this thread's CPU time is not the stage's.
    span.cpu_ns = kStageNotMeasured;
    batch.stages.push_back(stage_time(PipelineStage::infer, infer_place_, span, batch_size_));
    batch.left_stage_ns = span.end_ns;
}

void PipelineBatches::postprocess(PipelineBatch& batch) {
    batch.waited_until(monotonic_ns());
    const pipeline::StageTimer post;
    const std::vector<pipeline::FloatTensor> outputs = pipeline::float_tensors(batch.outputs, float_storage_);
    pipeline::BatchResults results = pipeline::decode_outputs(model_.steps, model_.head, outputs);
    batch.stages.push_back(stage_time(PipelineStage::postprocess, StagePlace::cpu, post.stop(), batch_size_));
    if (has_boxes(model_.steps)) {
        const pipeline::StageTimer nms;
        pipeline::suppress_boxes(model_.steps, model_.head, results);
        batch.stages.push_back(stage_time(PipelineStage::nms, StagePlace::cpu, nms.stop(), batch_size_));
    }
    batch.left_stage_ns = batch.stages.back().end_ns;
}

}  // namespace inferbench::runner
