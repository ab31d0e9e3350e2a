// An image pipeline cell's GPU stages (pipeline.preprocess: gpu, pipeline.postprocess: gpu) in the worker, through
// pipeline/gpu_stages: whether a cell can have them (judged the same way by `run --dry-run` and by the run), the
// hand-off of a batch pre-processed on the GPU to the backend, and SSD box decoding + NMS on the GPU from the
// backend's outputs (in GPU memory where it gives them, else its host outputs copied up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"
#include "pipeline/gpu_stages.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/model_pipelines.hpp"

namespace inferbench::runner {

// Why a pipeline cell with GPU stages cannot run on its cuda device, or nothing (also nothing for a cell without
// GPU stages, and for one on another device: backends/registry's pipeline_problem says why for those). In order:
// GPU pre-processing of PNG images (nvJPEG decodes JPEG only); post-processing the GPU does not do
// (gpu_postprocess_problem; a user's model's box coding is known from its graph only, so the worker judges an
// ssd_boxes user model); then GpuStages::open's `unavailable` line (no module, no GPU, no nvJPEG), asked once per
// device and module path in a process.
std::optional<std::string> pipeline_gpu_problem(const BenchmarkSpec& spec);

// Why a pipeline cell cannot run beyond its backend's and device's part (backends/registry's cell_problem):
// pipeline_model_problem, then pipeline_gpu_problem. What `run` and `run --dry-run` both ask.
std::optional<std::string> pipeline_cell_problem(const BenchmarkSpec& spec);

// The GPU stages on the cell's device; throws EnvironmentError with GpuStages' reason where they cannot open.
std::unique_ptr<pipeline::GpuStages> open_cell_gpu_stages(const BenchmarkSpec& spec);

// pipeline.preprocess gpu: the images nvJPEG cannot decode (a folder's PNG files) left out before timing, one line
// each in `set.skipped`; throws UserError when none is left.
void keep_gpu_decodable(pipeline::ImageSet& set, const std::string& images);

// How a GPU batch reached the backend: in GPU memory (stage_device_inputs), or through the host because the backend
// refused it, then with the time of that device-to-host copy (part of the infer stage's span).
struct InputHandoff {
    bool through_host = false;
    std::int64_t copy_ns = 0;
};

// Gives `device_batch` (GPU memory holding `host.info`'s bytes on CUDA device `device`) to the backend with
// stage_device_inputs; where it returns false, `copy_to_host` fills host.data (timed) and stage_inputs takes it.
InputHandoff stage_gpu_batch(Backend& backend, void* device_batch, int device, HostTensor& host,
                             const std::function<void(std::span<std::byte>)>& copy_to_host);

// The two SSD outputs the GPU decodes, where they are in GPU memory as float32 (the model's output order:
// locations, then scores); nothing where the backend gave none or another type (the caller copies the host outputs
// up).
struct DeviceSsdOutputs {
    const DeviceTensor* locs = nullptr;
    const DeviceTensor* scores = nullptr;
};
std::optional<DeviceSsdOutputs> device_ssd_outputs(std::span<const DeviceTensor> outputs);

// The GPU's SSD decoding + NMS for a model's outputs (as decode_outputs + suppress_boxes on the CPU): the priors of
// its coding, its classes from the scores' shape, the steps' thresholds.
class GpuSsdPostprocess {
public:
    GpuSsdPostprocess(const pipeline::GpuStages& gpu, const pipeline::ModelPipeline& model);
    // From outputs in GPU memory (valid until the backend's next infer(): call it before that).
    std::vector<std::vector<pipeline::Detection>> run(const DeviceSsdOutputs& outputs, std::int64_t batch) const;
    // From the backend's host outputs, copied to the GPU first (the copy is part of the call's time).
    std::vector<std::vector<pipeline::Detection>> run(std::span<const HostTensor> outputs, std::int64_t batch);

private:
    std::int64_t classes(const TensorInfo& scores) const;
    const pipeline::GpuStages& gpu_;
    const pipeline::ModelPipeline& model_;
    std::vector<pipeline::Prior> priors_;
    pipeline::GpuBuffer locs_;
    pipeline::GpuBuffer scores_;
};

}  // namespace inferbench::runner
