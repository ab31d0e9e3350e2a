// The GPU stages' kernels: grid-stride loops over pipeline/resample_math.hpp's per-element functions, CUB's radix
// sort for NMS's order, one block for NMS's greedy pass. Built with --fmad=false: no fused multiply-add, so the
// float arithmetic rounds as the CPU stages' does.
#include "pipeline/gpu_cuda/kernels.hpp"

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

__global__ void horizontal_pass(const pipeline::ResampleJob* jobs) {
    const pipeline::ResampleJob& job = jobs[blockIdx.y];
    const long long elements = static_cast<long long>(job.row_count) * job.x.placed_count * 3;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < elements;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        pipeline::horizontal_element(job, i);
}

__global__ void output_pass(const pipeline::ResampleJob* jobs, pipeline::ResampleOutput output, std::uint8_t* batch) {
    const pipeline::ResampleJob& job = jobs[blockIdx.y];
    const long long elements = static_cast<long long>(output.width) * output.height * 3;
    for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < elements;
         i += static_cast<long long>(gridDim.x) * blockDim.x)
        pipeline::output_element(job, output, i, batch);
}

__global__ void nms_keys(const float* scores, const std::uint32_t* ids, int count, std::uint64_t* keys,
                         std::int32_t* positions) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    keys[i] = pipeline::nms_sort_key(scores[i], ids ? ids[i] : static_cast<std::uint32_t>(i));
    positions[i] = i;
}

__global__ void offset_unit(const float* boxes, int count, float* unit) {
    __shared__ float largest[kThreads];
    float mine = boxes[0];
    for (long long i = threadIdx.x; i < 4LL * count; i += blockDim.x) mine = fmaxf(mine, boxes[i]);
    largest[threadIdx.x] = mine;
    __syncthreads();
    for (int half = kThreads / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) largest[threadIdx.x] = fmaxf(largest[threadIdx.x], largest[threadIdx.x + half]);
        __syncthreads();
    }
    if (threadIdx.x == 0) *unit = largest[0] + 1.0F;
}

// One thread per (rank, word): the 64 later ranks of the word that `rank` suppresses.
__global__ void nms_mask(const float* boxes, const std::int32_t* labels, const std::int32_t* order, int count,
                         const float* offset_unit, float iou_threshold, std::uint64_t* mask) {
    const int words = (count + kMaskBits - 1) / kMaskBits;
    const long long cell = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
    if (cell >= static_cast<long long>(count) * words) return;
    const int rank = static_cast<int>(cell / words);
    const int word = static_cast<int>(cell % words);
    const float unit = offset_unit ? *offset_unit : 0.0F;
    const int earlier = order[rank];
    std::uint64_t bits = 0;
    for (int j = 0; j < kMaskBits; ++j) {
        const int later_rank = word * kMaskBits + j;
        if (later_rank >= count) break;
        if (later_rank <= rank) continue;
        const int later = order[later_rank];
        if (pipeline::suppresses(boxes + earlier * 4LL, labels[earlier], boxes + later * 4LL, labels[later], unit,
                                 iou_threshold))
            bits |= 1ULL << j;
    }
    mask[cell] = bits;
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

// One thread per anchor: its box, then each class's score; a candidate per class above the threshold.
__global__ void ssd_candidates(DeviceSsdDecode d, const float* locs, const float* scores, const float* priors,
                               float* boxes, float* out_scores, std::int32_t* labels, std::uint32_t* ids,
                               std::int32_t* count, int capacity) {
    const int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= d.anchors) return;
    const bool tf = d.coding == INFERBENCH_GPU_SSD_TF;
    float code[4];
    float prior[4];
    for (int k = 0; k < 4; ++k) {
        code[k] = tf ? locs[a * 4LL + k] : locs[static_cast<long long>(k) * d.anchors + a];
        prior[k] = priors[a * 4LL + k];
    }
    float box[4];
    if (tf)
        pipeline::decode_ssd_tf_box(code, prior, d.width, d.height, ExpF{}, box);
    else
        pipeline::decode_ssd_r34_box(code, prior, d.width, d.height, ExpF{}, box);
    // TF: [anchors, classes] logits through a sigmoid; R34: [classes, anchors] through a softmax.
    const auto logit = [&](int c) {
        return tf ? scores[static_cast<long long>(a) * d.classes + c]
                  : scores[static_cast<long long>(c) * d.anchors + a];
    };
    float largest = 0.0F;
    float sum = 0.0F;
    if (!tf) {
        largest = logit(0);
        for (int c = 1; c < d.classes; ++c) largest = fmaxf(largest, logit(c));
        for (int c = 0; c < d.classes; ++c) sum += expf(logit(c) - largest);
    }
    for (int c = 1; c < d.classes; ++c) {  // class 0: the background
        const float score = tf ? 1.0F / (1.0F + expf(-logit(c))) : expf(logit(c) - largest) / sum;
        if (!(score > d.score_threshold)) continue;
        const int slot = atomicAdd(count, 1);
        if (slot >= capacity) continue;
        for (int k = 0; k < 4; ++k) boxes[slot * 4LL + k] = box[k];
        out_scores[slot] = score;
        labels[slot] = c;
        ids[slot] =
            static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(d.classes) + static_cast<std::uint32_t>(c);
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

void launch_horizontal_pass(const pipeline::ResampleJob* jobs, int job_count, long long max_elements,
                            cudaStream_t stream) {
    horizontal_pass<<<dim3(blocks_for(max_elements), job_count), kThreads, 0, stream>>>(jobs);
}

void launch_output_pass(const pipeline::ResampleJob* jobs, int job_count, const pipeline::ResampleOutput& output,
                        void* batch, cudaStream_t stream) {
    const long long elements = static_cast<long long>(output.width) * output.height * 3;
    output_pass<<<dim3(blocks_for(elements), job_count), kThreads, 0, stream>>>(jobs, output,
                                                                                static_cast<std::uint8_t*>(batch));
}

void launch_nms_keys(const float* scores, const std::uint32_t* ids, int count, std::uint64_t* keys,
                     std::int32_t* positions, cudaStream_t stream) {
    nms_keys<<<(count + kThreads - 1) / kThreads, kThreads, 0, stream>>>(scores, ids, count, keys, positions);
}

cudaError_t nms_sort_temp_bytes(int count, std::size_t* bytes) {
    return cub::DeviceRadixSort::SortPairsDescending(
        nullptr, *bytes, static_cast<const std::uint64_t*>(nullptr), static_cast<std::uint64_t*>(nullptr),
        static_cast<const std::int32_t*>(nullptr), static_cast<std::int32_t*>(nullptr), count);
}

cudaError_t sort_pairs_descending(void* temp, std::size_t temp_bytes, const std::uint64_t* keys_in,
                                  std::uint64_t* keys_out, const std::int32_t* values_in, std::int32_t* order,
                                  int count, cudaStream_t stream) {
    return cub::DeviceRadixSort::SortPairsDescending(temp, temp_bytes, keys_in, keys_out, values_in, order, count, 0,
                                                     64, stream);
}

void launch_offset_unit(const float* boxes, int count, float* unit, cudaStream_t stream) {
    offset_unit<<<1, kThreads, 0, stream>>>(boxes, count, unit);
}

void launch_nms_mask(const float* boxes, const std::int32_t* labels, const std::int32_t* order, int count,
                     const float* offset_unit, float iou_threshold, std::uint64_t* mask, cudaStream_t stream) {
    const long long words = (count + kMaskBits - 1) / kMaskBits;
    const long long cells = words * count;
    nms_mask<<<static_cast<unsigned>((cells + kThreads - 1) / kThreads), kThreads, 0, stream>>>(
        boxes, labels, order, count, offset_unit, iou_threshold, mask);
}

void launch_nms_scan(const std::uint64_t* mask, const std::int32_t* order, int count, int max_detections,
                     std::int32_t* kept, std::int32_t* kept_count, cudaStream_t stream) {
    const int words = (count + kMaskBits - 1) / kMaskBits;
    nms_scan<<<1, kThreads, words * sizeof(std::uint64_t), stream>>>(mask, order, count, max_detections, kept,
                                                                     kept_count);
}

void launch_ssd_candidates(const DeviceSsdDecode& decode, const float* locs, const float* scores, const float* priors,
                           float* boxes, float* out_scores, std::int32_t* labels, std::uint32_t* ids,
                           std::int32_t* count, int capacity, cudaStream_t stream) {
    ssd_candidates<<<(decode.anchors + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        decode, locs, scores, priors, boxes, out_scores, labels, ids, count, capacity);
}

void launch_gather_detections(const float* boxes, const float* scores, const std::int32_t* labels,
                              const std::uint32_t* ids, const std::int32_t* kept, const std::int32_t* kept_count,
                              int max_detections, void* out, cudaStream_t stream) {
    gather_detections<<<(max_detections + kThreads - 1) / kThreads, kThreads, 0, stream>>>(
        boxes, scores, labels, ids, kept, kept_count, max_detections, static_cast<InferbenchGpuDetection*>(out));
}

}  // namespace inferbench::pipeline_cuda
