// The GPU pipeline stages (nvJPEG decode, resize + normalise, SSD box decoding, class-wise NMS) through the CUDA
// module libinferbench_pipeline_cuda.so, opened with dlopen so that inferbench runs where there is no CUDA. Where
// the stages cannot run (no module, a module of another API version, no GPU, no nvJPEG) open() says why in one
// line, and a cell with GPU stages is skipped with that reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/pipeline.hpp"
#include "pipeline/gpu_stages_api.h"
#include "pipeline/nms.hpp"
#include "pipeline/postprocess.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/resize.hpp"

namespace inferbench::pipeline {

struct GpuStagesOptions {
    int device = 0;  // CUDA ordinal
    // Where the module is looked for, in order; empty: $INFERBENCH_PIPELINE_CUDA_MODULE, else beside the executable,
    // else ../lib/inferbench/ from it.
    std::vector<std::filesystem::path> module_candidates;
    // nvJPEG tried first (a path or soname); empty: $INFERBENCH_NVJPEG_LIBRARY, then libnvjpeg.so.13 and .12.
    std::string nvjpeg_library;
};

class GpuStages;

// The open stages, or why not (one line naming what is missing and how to fix it).
struct GpuStagesOpening {
    std::unique_ptr<GpuStages> stages;
    std::string unavailable;
};

// A decoded image: its size, or why the GPU decoder refused it (then empty width and height) and of which kind.
struct GpuDecodedImage {
    ImageSize size;
    int components = 0;
    std::string error;
    ImageErrorKind kind = ImageErrorKind::corrupt;
};

// The kind of a refusal by the module's decode status: nvJPEG's status, or -1 for the image limits.
ImageErrorKind gpu_decode_error_kind(int status, ImageSize size);

// An image of the last decode (its index and decoded size) and its slot in the batch.
struct GpuPreprocessJob {
    int image = 0;
    ImageSize size;
    std::int64_t slot = 0;
};

// Device memory owned through the module (the batch tensor, candidates).
class GpuBuffer {
public:
    GpuBuffer() = default;
    GpuBuffer(const GpuBuffer&) = delete;
    GpuBuffer& operator=(const GpuBuffer&) = delete;
    GpuBuffer(GpuBuffer&& other) noexcept;
    GpuBuffer& operator=(GpuBuffer&& other) noexcept;
    ~GpuBuffer();
    void* get() const { return data_; }
    std::size_t bytes() const { return bytes_; }

private:
    friend class GpuStages;
    const GpuStages* owner_ = nullptr;
    void* data_ = nullptr;
    std::size_t bytes_ = 0;
};

class GpuStages {
public:
    static GpuStagesOpening open(const GpuStagesOptions& options);
    static std::vector<std::filesystem::path> default_module_candidates();
    ~GpuStages();
    GpuStages(const GpuStages&) = delete;
    GpuStages& operator=(const GpuStages&) = delete;

    // "NVIDIA H100 80GB HBM3 (compute 9.0), nvJPEG 13.0.1 from libnvjpeg.so.13, module /path/lib...so"
    std::string description() const;

    GpuBuffer allocate(std::size_t bytes) const;
    void copy_to_device(const GpuBuffer& device, std::span<const std::byte> host, std::size_t offset = 0) const;
    void copy_to_host(std::span<std::byte> host, const GpuBuffer& device) const;

    // Every call throws EnvironmentError with the module's reason when the GPU work fails.
    std::vector<GpuDecodedImage> decode_jpeg(std::span<const std::span<const std::uint8_t>> files) const;
    std::vector<std::uint8_t> decoded_pixels(int image, ImageSize size) const;
    // Resize (pipeline/resize's geometry and weights) and normalise (the table pipeline/preprocess's normalize_into
    // writes) each job's image into its slot of `batch` (device memory of at least the slots' bytes): the same
    // bytes as the CPU's resize_image + normalize_into. Throws std::invalid_argument as resize_geometry.
    void preprocess(const PipelineSteps& steps, std::span<const GpuPreprocessJob> jobs, const GpuBuffer& batch) const;
    // Class-wise NMS of candidates in device memory (boxes [count, 4], scores [count], labels [count] int32) as
    // pipeline/nms's batched_nms: the kept candidates' positions by score (ties: lower position first), at most
    // max_detections.
    std::vector<int> nms(const GpuBuffer& boxes, const GpuBuffer& scores, const GpuBuffer& labels, int count,
                         float iou_threshold, int max_detections) const;
    // SSD outputs (float32, device: the model's two outputs in its order) to each image's detections, as
    // decode_boxes + select_detections with every candidate entering NMS (candidates_per_class 0). `priors` as
    // ssd_mobilenet_priors / ssd_resnet34_priors give them; `classes` includes the background.
    std::vector<std::vector<Detection>> ssd_detect(BoxCoding coding, std::span<const Prior> priors,
                                                   std::int64_t classes, ImageSize input, float score_threshold,
                                                   float iou_threshold, int max_detections, const GpuBuffer& locs,
                                                   const GpuBuffer& scores, int batch) const;

private:
    struct Api;
    GpuStages() = default;
    void free(void* device) const;
    void* handle_ = nullptr;
    std::filesystem::path path_;
    std::unique_ptr<Api> api_;
    InferbenchGpuStages* stages_ = nullptr;
    friend class GpuBuffer;
};

// One batch's pre-processing on the GPU, as preprocess_batch on the CPU: images[i] decoded (nvJPEG) and resized and
// normalised (one fused pass) into slot i of `batch` (GPU memory). The stage times are on core/clock with place gpu:
// decode, and resize, which includes the normalisation (`normalize` is left without a span: images 0, not to be
// stored); cpu_ns is the calling thread's CPU time (nvJPEG's host work included where it runs on this thread). An
// image the GPU decoder refuses is a failure of its kind with the decoder's reason, its slot filled as
// fill_slot_black fills it.
PreprocessedBatch gpu_preprocess_batch(const GpuStages& gpu, std::span<const EncodedImage* const> images,
                                       const PipelineSteps& steps, const GpuBuffer& batch);

// Why a model's post-processing cannot run on the GPU stages, or nothing: they decode SSD boxes (both codings) and
// run NMS with every candidate entering; softmax + top-k, YOLO grids, argmax and SSD-ResNet34's per-class
// candidate cap run on the CPU (pipeline.postprocess: cpu).
std::optional<std::string> gpu_postprocess_problem(const PipelineSteps& steps, const DetectionHead& head);

// One image's resize as the module is given it: resize_image's geometry, both axes' weights (resize_weights) and
// the source rows the vertical taps read.
struct GpuImagePlan {
    ResizeGeometry geometry;
    ResizeWeights x;
    ResizeWeights y;
    std::int64_t first_row = 0;
    std::int64_t row_count = 0;
};
GpuImagePlan gpu_image_plan(const PipelineSteps& steps, ImageSize size);

// What the module's output pass looks up per output channel and 0..255 value: the bytes normalize_into writes for
// a pixel of that value (steps' pixel type, mean, std, channel order), 3 x 256 elements.
std::vector<std::byte> normalization_table(const PipelineSteps& steps);

}  // namespace inferbench::pipeline
