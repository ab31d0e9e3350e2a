// The GPU stages' kernels and their launches (kernels.cu); host code calls these, every launch on the caller's
// stream, its errors checked by the caller (cudaGetLastError after each).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "pipeline/resample_math.hpp"

namespace inferbench::pipeline_cuda {

// One image's resize in device memory: its decoded pixels, its taps (device), its rows buffer.
struct DeviceImageJob {
    const std::uint8_t* source = nullptr;  // RGB8 HWC
    std::int32_t source_width = 0;
    std::int32_t slot = 0;
    std::int32_t first_row = 0;
    std::int32_t row_count = 0;
    std::int32_t placed_x = 0;
    std::int32_t placed_width = 0;
    std::int32_t placed_y = 0;
    std::int32_t placed_height = 0;
    const pipeline::ResampleTap* x_taps = nullptr;
    const float* x_weights = nullptr;
    const pipeline::ResampleTap* y_taps = nullptr;
    const float* y_weights = nullptr;
    std::uint8_t* rows = nullptr;  // row_count x placed_width x 3
};

struct DeviceTensorFormat {
    std::int32_t width = 0;
    std::int32_t height = 0;
    bool nchw = true;
    std::int32_t pixel_type = 0;  // INFERBENCH_GPU_PIXEL_*
    bool bgr = false;
    float mean[3] = {0, 0, 0};
    float std_dev[3] = {1, 1, 1};
    std::uint8_t fill = 0;
};

// The horizontal pass of every job (jobs in device memory), then the vertical pass with the normalisation into
// the batch tensor (every element of each job's slot written, the fill outside the placed part).
void launch_horizontal_pass(const DeviceImageJob* jobs, int job_count, int max_rows, int max_width,
                            cudaStream_t stream);
void launch_vertical_normalize(const DeviceImageJob* jobs, int job_count, const DeviceTensorFormat& format,
                               void* batch, cudaStream_t stream);

// NMS of `count` candidates: sort keys (score descending, then id ascending; the id is the position where ids is
// null) with each candidate's position as the value, the pairwise suppression mask in sorted order, the greedy
// scan.
void launch_nms_keys(const float* scores, const std::uint32_t* ids, int count, std::uint64_t* keys,
                     std::int32_t* positions, cudaStream_t stream);
// Temporary storage CUB's descending radix sort of `count` pairs needs; the sort itself.
cudaError_t nms_sort_temp_bytes(int count, std::size_t* bytes);
cudaError_t sort_pairs_descending(void* temp, std::size_t temp_bytes, const std::uint64_t* keys_in,
                                  std::uint64_t* keys_out, const std::int32_t* values_in, std::int32_t* order,
                                  int count, cudaStream_t stream);
// mask[rank * ceil(count / 64) + word]: bit j of the word set where the candidate of rank (word * 64 + j) comes
// after `rank`, has its label and overlaps it by more than iou_threshold.
void launch_nms_mask(const float* boxes, const std::int32_t* labels, const std::int32_t* order, int count,
                     float iou_threshold, std::uint64_t* mask, cudaStream_t stream);
// Kept candidates' positions (order[rank]) into kept (device), their number into kept_count (device).
void launch_nms_scan(const std::uint64_t* mask, const std::int32_t* order, int count, int max_detections,
                     std::int32_t* kept,
                     std::int32_t* kept_count, cudaStream_t stream);

struct DeviceSsdDecode {
    std::int32_t anchors = 0;
    std::int32_t classes = 0;
    bool locs_coords_major = false;
    bool scores_classes_major = false;
    bool yx_order = false;
    float center_scale = 10.0F;
    float size_scale = 5.0F;
    std::int32_t score_function = 0;
    std::int32_t background_class = -1;
    float score_threshold = 0.0F;
};

// One image's SSD candidates: boxes, scores, labels, ids (anchor * classes + class), their number in count
// (device; zeroed by the caller), at most capacity (further ones counted, not written).
void launch_ssd_candidates(const DeviceSsdDecode& decode, const float* locs, const float* scores,
                           const float* priors, float* boxes, float* out_scores, std::int32_t* labels,
                           std::uint32_t* ids, std::int32_t* count, int capacity, cudaStream_t stream);

// The kept candidates (positions in device `kept`, *kept_count of them) as InferbenchGpuDetection records in
// device `out`.
void launch_gather_detections(const float* boxes, const float* scores, const std::int32_t* labels,
                              const std::uint32_t* ids, const std::int32_t* kept, const std::int32_t* kept_count,
                              int max_detections, void* out, cudaStream_t stream);

}  // namespace inferbench::pipeline_cuda
