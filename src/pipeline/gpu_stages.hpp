// The GPU pipeline stages (nvJPEG decode, resize + normalise, SSD box decoding, class-wise NMS) through the CUDA
// module libinferbench_pipeline_cuda.so, opened with dlopen so that inferbench runs where there is no CUDA. Where
// the stages cannot run (no module, a module of another API version, no GPU, no nvJPEG) open() says why in one
// line, and a cell with GPU stages is skipped with that reason.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/pipeline.hpp"
#include "pipeline/gpu_stages_api.h"
#include "pipeline/resize_plan.hpp"

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

// A decoded image: its size, or why the GPU decoder refused it (then empty width and height).
struct GpuDecodedImage {
    ImageSize size;
    int components = 0;
    std::string error;
};

// An image of the last decode placed into its slot of the batch by its resize plan.
struct GpuPreprocessJob {
    int image = 0;
    std::int64_t slot = 0;
    const ResizePlan* plan = nullptr;
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
    void copy_to_device(const GpuBuffer& device, std::span<const std::byte> host) const;
    void copy_to_host(std::span<std::byte> host, const GpuBuffer& device) const;

    // Every call throws EnvironmentError with the module's reason when the GPU work fails.
    std::vector<GpuDecodedImage> decode_jpeg(std::span<const std::span<const std::uint8_t>> files) const;
    std::vector<std::uint8_t> decoded_pixels(int image, ImageSize size) const;
    void preprocess(const PipelineSteps& steps, std::span<const GpuPreprocessJob> jobs, const GpuBuffer& batch) const;
    // Class-wise NMS of candidates in device memory (boxes [count, 4], scores [count], labels [count] int32): the kept
    // candidates' positions, in order of score (ties: lower position first), at most max_detections.
    std::vector<int> nms(const GpuBuffer& boxes, const GpuBuffer& scores, const GpuBuffer& labels, int count,
                         float iou_threshold, int max_detections) const;
    // SSD outputs (float32, device) to each image's detections after class-wise NMS.
    std::vector<std::vector<InferbenchGpuDetection>> ssd_detect(const InferbenchGpuSsdDecode& decode,
                                                                float iou_threshold, int max_detections,
                                                                const GpuBuffer& locs, const GpuBuffer& scores,
                                                                int batch) const;

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

// The tensor format the module takes, from the steps (exposed for tests: the C side reads exactly these fields).
InferbenchGpuTensorFormat gpu_tensor_format(const PipelineSteps& steps);

}  // namespace inferbench::pipeline
