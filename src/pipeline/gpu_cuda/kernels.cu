// The GPU stages' kernels. The per-element arithmetic is pipeline/resample_math.hpp's, shared with the CPU stages.
#include "pipeline/gpu_cuda/kernels.hpp"

#include <cuda_fp16.h>

#include <cub/device/device_radix_sort.cuh>

#include "pipeline/gpu_stages_api.h"

namespace inferbench::pipeline_cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kMaskBits = 64;

int blocks_for(long long elements) {
    const long long blocks = (elements + kThreads - 1) / kThreads;
    return static_cast<int>(blocks < 4096 ? (blocks > 0 ? blocks : 1) : 4096);
}

__global__ void horizontal_pass(const DeviceImageJob* jobs) {
    const DeviceImageJob& job = jobs[blockIdx.y];
    const long long elements = static_cast<long long>(job.row_count) * job.placed_width * 3;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < elements;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int c = static_cast<int>(i % 3);
        const int x = static_cast<int>((i / 3) % job.placed_width);
        const long long r = i / (3LL * job.placed_width);
        const pipeline::ResampleTap tap = job.x_taps[x];
        const std::uint8_t* first =
            job.source + ((job.first_row + r) * job.source_width + tap.first) * 3 + c;
        job.rows[i] = pipeline::resample_taps(first, 3, job.x_weights + tap.weight_offset, tap.count);
    }
}

__device__ void store_pixel(const DeviceTensorFormat& f, void* batch, long long index, std::uint8_t pixel,
                            int rgb_channel) {
    if (f.pixel_type == INFERBENCH_GPU_PIXEL_U8) {
        static_cast<std::uint8_t*>(batch)[index] = pixel;
        return;
    }
    const float value = pipeline::normalize_value(pixel, f.mean[rgb_channel], f.std_dev[rgb_channel]);
    if (f.pixel_type == INFERBENCH_GPU_PIXEL_F16)
        static_cast<__half*>(batch)[index] = __float2half_rn(value);
    else
        static_cast<float*>(batch)[index] = value;
}

__global__ void vertical_normalize(const DeviceImageJob* jobs, DeviceTensorFormat f, void* batch) {
    const DeviceImageJob& job = jobs[blockIdx.y];
    const long long plane = static_cast<long long>(f.width) * f.height;
    const long long row_stride = 3LL * job.placed_width;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < plane * 3;
         i += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int c = static_cast<int>(f.nchw ? i / plane : i % 3);
        const long long pixel_index = f.nchw ? i % plane : i / 3;
        const int y = static_cast<int>(pixel_index / f.width);
        const int x = static_cast<int>(pixel_index % f.width);
        const int rgb = f.bgr ? 2 - c : c;
        const int py = y - job.placed_y;
        const int px = x - job.placed_x;
        std::uint8_t pixel = f.fill;
        if (py >= 0 && py < job.placed_height && px >= 0 && px < job.placed_width) {
            const pipeline::ResampleTap tap = job.y_taps[py];
            const std::uint8_t* first = job.rows + (tap.first - job.first_row) * row_stride + px * 3LL + rgb;
            pixel = pipeline::resample_taps(first, row_stride, job.y_weights + tap.weight_offset, tap.count);
        }
        store_pixel(f, batch, pipeline::tensor_offset(f.nchw, job.slot, c, y, x, f.height, f.width), pixel, rgb);
    }
}

__global__ void nms_keys(const float* scores, const std::uint32_t* ids, int count, std::uint64_t* keys,
                         std::int32_t* positions) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    keys[i] = pipeline::nms_sort_key(scores[i], ids ? ids[i] : static_cast<std::uint32_t>(i));
    positions[i] = i;
}

// One thread per row rank of a 64 x 64 tile: the bits of the tile's column ranks it suppresses.
__global__ void nms_mask(const float* boxes, const std::int32_t* labels, const std::int32_t* order, int count,
                         float iou_threshold, std::uint64_t* mask) {
    const int words = (count + kMaskBits - 1) / kMaskBits;
    const int row = blockIdx.y * kMaskBits + threadIdx.x;
    const int column_start = blockIdx.x * kMaskBits;
    __shared__ float tile_boxes[kMaskBits * 4];
    __shared__ std::int32_t tile_labels[kMaskBits];
    const int column = column_start + threadIdx.x;
    if (column < count) {
        const int position = order[column];
        for (int k = 0; k < 4; ++k) tile_boxes[threadIdx.x * 4 + k] = boxes[position * 4LL + k];
        tile_labels[threadIdx.x] = labels[position];
    }
    __syncthreads();
    if (row >= count) return;
    const int position = order[row];
    const float box[4] = {boxes[position * 4LL], boxes[position * 4LL + 1], boxes[position * 4LL + 2],
                          boxes[position * 4LL + 3]};
    const std::int32_t label = labels[position];
    std::uint64_t bits = 0;
    for (int j = 0; j < kMaskBits && column_start + j < count; ++j) {
        if (column_start + j <= row || tile_labels[j] != label) continue;
        if (pipeline::box_iou(box, &tile_boxes[j * 4]) > iou_threshold) bits |= 1ULL << j;
    }
    mask[static_cast<long long>(row) * words + blockIdx.x] = bits;
}

// The greedy pass in score order, by one block: a rank not yet suppressed is kept and suppresses its mask row.
__global__ void nms_scan(const std::uint64_t* mask, const std::int32_t* order, int count, int max_detections,
                         std::int32_t* kept, std::int32_t* kept_count) {
    extern __shared__ std::uint64_t removed[];
    __shared__ int kept_so_far;
    __shared__ bool take;
    const int words = (count + kMaskBits - 1) / kMaskBits;
    for (int w = threadIdx.x; w < words; w += blockDim.x) removed[w] = 0;
    if (threadIdx.x == 0) kept_so_far = 0;
    __syncthreads();
    for (int rank = 0; rank < count; ++rank) {
        if (threadIdx.x == 0) {
            take = kept_so_far < max_detections && !((removed[rank / kMaskBits] >> (rank % kMaskBits)) & 1ULL);
            if (take) kept[kept_so_far++] = order[rank];
        }
        __syncthreads();
        const bool taken = take;
        const int so_far = kept_so_far;
        if (taken) {
            const std::uint64_t* row = mask + static_cast<long long>(rank) * words;
            for (int w = rank / kMaskBits + threadIdx.x; w < words; w += blockDim.x) removed[w] |= row[w];
        }
        __syncthreads();
        if (so_far >= max_detections) break;
    }
    if (threadIdx.x == 0) *kept_count = kept_so_far;
}

struct ExpF {
    __host__ __device__ float operator()(float v) const { return expf(v); }
};

__global__ void ssd_candidates(DeviceSsdDecode d, const float* locs, const float* scores, const float* priors,
                               float* boxes, float* out_scores, std::int32_t* labels, std::uint32_t* ids,
                               std::int32_t* count, int capacity) {
    const int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= d.anchors) return;
    float delta[4];
    float prior[4];
    for (int k = 0; k < 4; ++k) {
        delta[k] = d.locs_coords_major ? locs[static_cast<long long>(k) * d.anchors + a] : locs[a * 4LL + k];
        prior[k] = priors[a * 4LL + k];
    }
    float box[4];
    pipeline::decode_center_size(delta, prior, d.yx_order, d.center_scale, d.size_scale, ExpF{}, box);
    const auto logit = [&](int k) {
        return d.scores_classes_major ? scores[static_cast<long long>(k) * d.anchors + a]
                                      : scores[static_cast<long long>(a) * d.classes + k];
    };
    float largest = logit(0);
    float total = 0.0F;
    if (d.score_function == 2) {
        for (int k = 1; k < d.classes; ++k) largest = fmaxf(largest, logit(k));
        for (int k = 0; k < d.classes; ++k) total += expf(logit(k) - largest);
    }
    for (int k = 0; k < d.classes; ++k) {
        if (k == d.background_class) continue;
        const float s = logit(k);
        const float p = d.score_function == 2   ? expf(s - largest) / total
                        : d.score_function == 1 ? 1.0F / (1.0F + expf(-s))
                                                : s;
        if (!(p > d.score_threshold)) continue;
        const int slot = atomicAdd(count, 1);
        if (slot >= capacity) continue;
        for (int j = 0; j < 4; ++j) boxes[slot * 4LL + j] = box[j];
        out_scores[slot] = p;
        labels[slot] = k;
        ids[slot] = static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(d.classes) + static_cast<std::uint32_t>(k);
    }
}

__global__ void gather_detections(const float* boxes, const float* scores, const std::int32_t* labels,
                                  const std::uint32_t* ids, const std::int32_t* kept, const std::int32_t* kept_count,
                                  int max_detections, InferbenchGpuDetection* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= max_detections || i >= *kept_count) return;
    const int position = kept[i];
    InferbenchGpuDetection d;
    for (int k = 0; k < 4; ++k) d.box[k] = boxes[position * 4LL + k];
    d.score = scores[position];
    d.label = labels[position];
    d.candidate = static_cast<int>(ids[position]);
    out[i] = d;
}

}  // namespace

void launch_gather_detections(const float* boxes, const float* scores, const std::int32_t* labels,
                              const std::uint32_t* ids, const std::int32_t* kept, const std::int32_t* kept_count,
                              int max_detections, void* out, cudaStream_t stream) {
    gather_detections<<<(max_detections + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        boxes, scores, labels, ids, kept, kept_count, max_detections, static_cast<InferbenchGpuDetection*>(out));
}

void launch_horizontal_pass(const DeviceImageJob* jobs, int job_count, int max_rows, int max_width,
                            cudaStream_t stream) {
    const dim3 grid(blocks_for(static_cast<long long>(max_rows) * max_width * 3), job_count);
    horizontal_pass<<<grid, kThreads, 0, stream>>>(jobs);
}

void launch_vertical_normalize(const DeviceImageJob* jobs, int job_count, const DeviceTensorFormat& format,
                               void* batch, cudaStream_t stream) {
    const dim3 grid(blocks_for(static_cast<long long>(format.width) * format.height * 3), job_count);
    vertical_normalize<<<grid, kThreads, 0, stream>>>(jobs, format, batch);
}

void launch_nms_keys(const float* scores, const std::uint32_t* ids, int count, std::uint64_t* keys,
                     std::int32_t* positions, cudaStream_t stream) {
    nms_keys<<<(count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(scores, ids, count, keys, positions);
}

cudaError_t nms_sort_temp_bytes(int count, std::size_t* bytes) {
    return cub::DeviceRadixSort::SortPairsDescending(nullptr, *bytes, static_cast<const std::uint64_t*>(nullptr),
                                                     static_cast<std::uint64_t*>(nullptr),
                                                     static_cast<const std::int32_t*>(nullptr),
                                                     static_cast<std::int32_t*>(nullptr), count);
}

cudaError_t sort_pairs_descending(void* temp, std::size_t temp_bytes, const std::uint64_t* keys_in,
                                  std::uint64_t* keys_out, const std::int32_t* values_in, std::int32_t* order,
                                  int count, cudaStream_t stream) {
    return cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, values_in, order, count, 0,
                                                     64, stream);
}

void launch_nms_mask(const float* boxes, const std::int32_t* labels, const std::int32_t* order, int count,
                     float iou_threshold, std::uint64_t* mask, cudaStream_t stream) {
    const int words = (count + kMaskBits - 1) / kMaskBits;
    nms_mask<<<dim3(words, words), kMaskBits, 0, stream>>>(boxes, labels, order, count, iou_threshold, mask);
}

void launch_nms_scan(const std::uint64_t* mask, const std::int32_t* order, int count, int max_detections,
                     std::int32_t* kept, std::int32_t* kept_count, cudaStream_t stream) {
    const int words = (count + kMaskBits - 1) / kMaskBits;
    nms_scan<<<1, kThreads, words * sizeof(std::uint64_t), stream>>>(mask, order, count, max_detections, kept,
                                                                     kept_count);
}

void launch_ssd_candidates(const DeviceSsdDecode& decode, const float* locs, const float* scores,
                           const float* priors, float* boxes, float* out_scores, std::int32_t* labels,
                           std::uint32_t* ids, std::int32_t* count, int capacity, cudaStream_t stream) {
    ssd_candidates<<<(decode.anchors + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        decode, locs, scores, priors, boxes, out_scores, labels, ids, count, capacity);
}

}  // namespace inferbench::pipeline_cuda
