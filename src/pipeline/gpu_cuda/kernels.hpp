// The GPU stages' kernels and their launches (kernels.cu); every launch on the caller's stream, its errors checked
// by the caller (cudaGetLastError after each). The per-element arithmetic is pipeline/resample_math.hpp's.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "pipeline/resample_math.hpp"

namespace inferbench::pipeline_cuda {

// The horizontal pass of every job (jobs in device memory), then every element of each job's slot.
void launch_horizontal_pass(const pipeline::ResampleJob* jobs, int job_count, long long max_elements,
                            cudaStream_t stream);
void launch_output_pass(const pipeline::ResampleJob* jobs, int job_count, const pipeline::ResampleOutput& output,
                        void* batch, cudaStream_t stream);

// NMS of `count` candidates. Keys: score descending, then id ascending (the id is the position where ids is null),
// with each candidate's position as the value.
void launch_nms_keys(const float* scores, const std::uint32_t* ids, int count, std::uint64_t* keys,
                     std::int32_t* positions, cudaStream_t stream);
cudaError_t nms_sort_temp_bytes(int count, std::size_t* bytes);
cudaError_t sort_pairs_descending(void* temp, std::size_t temp_bytes, const std::uint64_t* keys_in,
                                  std::uint64_t* keys_out, const std::int32_t* values_in, std::int32_t* order,
                                  int count, cudaStream_t stream);
// The largest coordinate of all boxes plus one (torchvision's class offset unit) into *unit (device).
void launch_offset_unit(const float* boxes, int count, float* unit, cudaStream_t stream);
// mask[rank * words + word], words = ceil(count / 64): bit j set where the candidate of rank word * 64 + j comes
// after `rank` and is suppressed by it. offset_unit: device pointer to the class offset unit, or null (per class).
void launch_nms_mask(const float* boxes, const std::int32_t* labels, const std::int32_t* order, int count,
                     const float* offset_unit, float iou_threshold, std::uint64_t* mask, cudaStream_t stream);
// The greedy pass: kept candidates' positions (order[rank]) into kept, their number into kept_count (device).
void launch_nms_scan(const std::uint64_t* mask, const std::int32_t* order, int count, int max_detections,
                     std::int32_t* kept, std::int32_t* kept_count, cudaStream_t stream);

// How SSD outputs are read: pipeline/box_decoding's two codings.
struct DeviceSsdDecode {
    std::int32_t coding = 1;  // INFERBENCH_GPU_SSD_*
    std::int32_t anchors = 0;
    std::int32_t classes = 0;
    float width = 0;  // the model input's, for boxes in pixels
    float height = 0;
    float score_threshold = 0;
};

// One image's SSD candidates (class 0, the background, skipped): boxes, scores, labels, ids (anchor * classes +
// class), their number in *count (device, zeroed by the caller); at most capacity written, all counted.
void launch_ssd_candidates(const DeviceSsdDecode& decode, const float* locs, const float* scores, const float* priors,
                           float* boxes, float* out_scores, std::int32_t* labels, std::uint32_t* ids,
                           std::int32_t* count, int capacity, cudaStream_t stream);
// The kept candidates (positions in `kept`, *kept_count of them) as InferbenchGpuDetection records in `out`.
void launch_gather_detections(const float* boxes, const float* scores, const std::int32_t* labels,
                              const std::uint32_t* ids, const std::int32_t* kept, const std::int32_t* kept_count,
                              int max_detections, void* out, cudaStream_t stream);

}  // namespace inferbench::pipeline_cuda
