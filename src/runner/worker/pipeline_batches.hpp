// An image pipeline cell's work on one batch, stage by stage (core/pipeline's PipelineStage): read (the batch's
// encoded files taken from memory, where they were read before timing), decode, resize and normalise over the
// cell's thread pool, infer (the new inputs staged on the backend, one inference, the outputs back in host memory),
// post-processing and NMS. Each stage of each batch is timed on core/clock as one PipelineStageTime; the sequential
// and overlapped loops (runner/worker/pipeline_cell) call these same functions, one batch at a time or on threads.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"
#include "pipeline/gpu_stages.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/model_pipelines.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/thread_pool.hpp"

namespace inferbench::runner {

// The cell's pipeline: a zoo model's published one, or a user's model's from the plan's steps checked against its
// graph. Throws UserError where there is none (the reason: models without images, a user's model without steps).
pipeline::ModelPipeline cell_pipeline(const BenchmarkSpec& spec, const std::string& model_path);

// The cell's images in memory, each decoded once, untimed: a file that does not decode is left out like one whose
// header was refused, with one line in `skipped`. Throws UserError when none is left.
pipeline::ImageSet usable_images(const BenchmarkSpec& spec);

// One batch on its way through the stages: its input tensor, its outputs, the times of the stages it passed and when
// it left one stage and entered the next (overlapped: the waits in the queues between them).
struct PipelineBatch {
    std::int64_t number = 0;  // from 0, in the order batches are read
    std::vector<HostTensor> input;  // one tensor, the model's image input
    pipeline::GpuBuffer device_input;  // preprocess gpu: the same tensor in the GPU's memory
    std::vector<HostTensor> outputs;
    DeviceTimes device;
    std::vector<PipelineStageTime> stages;
    std::int64_t queue_ns = 0;
    std::int64_t left_stage_ns = 0;  // the end of the last stage it passed

    std::int64_t start_ns() const { return stages.empty() ? 0 : stages.front().start_ns; }
    std::int64_t end_ns() const { return stages.empty() ? 0 : stages.back().end_ns; }
    // Time from the end of the last stage to now, added to queue_ns: the batch waited in a queue.
    void waited_until(std::int64_t now_ns);
};

class PipelineBatches {
public:
    // The model's one image input (its TensorInfo at the cell's batch size) must hold batch size x the steps' slot
    // bytes of the steps' pixel type: else UserError naming both. `gpu` (preprocess gpu: the opened GPU stages)
    // decodes, resizes and normalises on the GPU; the batch goes to the backend from the GPU's memory where it
    // takes it (stage_device_inputs), else through the host, the copy timed in the infer stage.
    PipelineBatches(Backend& backend, const BenchmarkSpec& spec, pipeline::ModelPipeline model,
                    pipeline::ImageSet images, std::unique_ptr<pipeline::GpuStages> gpu = nullptr);

    const TensorInfo& input_info() const { return input_info_; }
    std::int64_t images() const { return static_cast<std::int64_t>(images_.images.size()); }
    // One line per file left out before timing: "<file>: <why>".
    const std::vector<std::string>& skipped() const { return images_.skipped; }
    PipelineBatch make_batch() const;

    // Stages read, decode, resize, normalise of batch `number` into `batch` (its stages reset). Thread: one caller.
    void preprocess(std::int64_t number, PipelineBatch& batch);
    // Stage infer: stage_inputs, infer, last_outputs. Thread: one caller.
    void infer(PipelineBatch& batch);
    // Stages postprocess and (boxes) nms. Thread: one caller.
    void postprocess(PipelineBatch& batch);
    // Images that failed in a measured batch (none should: each decoded once before timing).
    std::int64_t failed_images() const { return failed_; }

private:
    // The batch's input to the backend: from the host, or (preprocess gpu) from the GPU's memory where the backend
    // takes it, else copied to the host first.
    void stage_batch(PipelineBatch& batch);

    Backend& backend_;
    pipeline::ModelPipeline model_;
    pipeline::ImageSet images_;
    TensorInfo input_info_;
    std::int64_t batch_size_ = 1;
    StagePlace infer_place_ = StagePlace::cpu;
    pipeline::ThreadPool pool_;
    pipeline::PreprocessScratch scratch_;
    std::vector<const pipeline::EncodedImage*> chosen_;
    std::vector<std::vector<float>> float_storage_;
    std::int64_t failed_ = 0;
    std::unique_ptr<pipeline::GpuStages> gpu_;
    int device_index_ = 0;
    // Overlapped, pre-processing and inference run on two threads: the GPU stages' calls are made one at a time.
    std::mutex gpu_mutex_;
};

}  // namespace inferbench::runner
