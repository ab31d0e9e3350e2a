// The state behind the C API's InferbenchGpuStages handle: the device, a stream, nvJPEG and the buffers reused
// between batches. Each stage is a member function that throws (CudaError, std::runtime_error); the C functions
// in stages_module.cpp turn that into their error text.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <string>
#include <vector>

#include "pipeline/gpu_cuda/device_buffer.hpp"
#include "pipeline/gpu_cuda/nvjpeg_library.hpp"
#include "pipeline/gpu_stages_api.h"

namespace inferbench::pipeline_cuda {

// NMS takes at most this many candidates per image (its mask is candidates^2 / 8 bytes: 128 MiB here).
inline constexpr int kMaxNmsCandidates = 32768;

class GpuStages {
public:
    GpuStages(int device, const std::string& nvjpeg_library);
    ~GpuStages();
    GpuStages(const GpuStages&) = delete;
    GpuStages& operator=(const GpuStages&) = delete;

    const std::string& description() const { return description_; }
    void activate() const;  // cudaSetDevice: calls may come from any thread
    cudaStream_t stream() const { return stream_; }
    void synchronize(const char* what) const;

    void decode(const unsigned char* const* data, const size_t* sizes, int count, InferbenchGpuImageInfo* infos);
    void decoded_pixels(int image, unsigned char* host, size_t bytes) const;
    void preprocess(const InferbenchGpuTensorFormat& format, const InferbenchGpuImagePlan* plans, int count,
                    void* batch);
    // NMS over candidates in device memory; ids null: a candidate's id is its position. The kept positions stay in
    // device memory (kept_device()) and are returned as their number.
    int nms(const float* boxes, const float* scores, const std::int32_t* labels, const std::uint32_t* ids, int count,
            const InferbenchGpuNmsSettings& settings);
    void kept_positions(int* host, int count) const;
    void ssd_detect(const InferbenchGpuSsdDecode& decode, const InferbenchGpuNmsSettings& nms_settings,
                    const float* locs, const float* scores, int batch, InferbenchGpuDetection* out, int* counts);

private:
    struct DecodedImage {
        std::size_t offset = 0;
        int width = 0;
        int height = 0;
        bool valid = false;
    };
    void decode_one_by_one(const unsigned char* const* data, const size_t* sizes, const std::vector<int>& valid,
                           InferbenchGpuImageInfo* infos);

    int device_ = 0;
    cudaStream_t stream_ = nullptr;
    std::unique_ptr<NvjpegLibrary> nvjpeg_;
    NvjpegHandle handle_ = nullptr;
    NvjpegState batched_state_ = nullptr;
    NvjpegState single_state_ = nullptr;
    int batched_size_ = 0;
    std::string description_;

    GrowingBuffer decoded_;
    std::vector<DecodedImage> images_;
    GrowingBuffer plan_buffer_;
    GrowingBuffer rows_;
    GrowingBuffer nms_keys_;
    GrowingBuffer nms_sorted_keys_;
    GrowingBuffer nms_positions_;
    GrowingBuffer nms_order_;
    GrowingBuffer nms_mask_;
    GrowingBuffer nms_temp_;
    GrowingBuffer nms_kept_;
    GrowingBuffer nms_kept_count_;
    GrowingBuffer nms_offset_unit_;
    GrowingBuffer ssd_priors_;
    GrowingBuffer ssd_candidates_;
    GrowingBuffer ssd_count_;
    GrowingBuffer detections_;
};

}  // namespace inferbench::pipeline_cuda
