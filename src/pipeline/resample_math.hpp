// The per-element arithmetic of the GPU stages, written as plain functions that compile both as CUDA device code
// (pipeline/gpu_cuda's kernels call them) and as host code (tests/pipeline/gpu_arithmetic_test.cpp runs them over
// whole images and candidate sets and compares with the CPU stages):
//  * resize: pipeline/resize's two passes with its fixed-point weights (resize_weights): 8-bit rows, sums started
//    at half and shifted by kResizeWeightBits, clamped to 0..255; the normalisation as a lookup of the 256 values per
//    output channel that pipeline/preprocess's normalize_into writes (the CPU's own values, f32, f16 or u8);
//  * NMS: pipeline/nms's torchvision arithmetic (IoU in float, "> threshold", score order with ties by index, the
//    class offset trick for few boxes);
//  * SSD decoding: pipeline/box_decoding's two box coders, operation for operation.
// No library calls and no standard containers, so that nvcc compiles it as device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define INFERBENCH_HOST_DEVICE __host__ __device__ inline
#else
#define INFERBENCH_HOST_DEVICE inline
#endif

namespace inferbench::pipeline {

// pipeline/resize.hpp's kResizeWeightBits (pipeline/gpu_stages.cpp asserts that they agree).
inline constexpr int kResampleWeightBits = 22;

// One axis of a resize as resize_weights makes it: output i (of placed_count, written from placed_begin on) reads
// taps[i] samples from start[i] with weights[i * max_taps + j].
struct ResampleAxis {
    std::int32_t placed_begin = 0;
    std::int32_t placed_count = 0;
    std::int32_t max_taps = 0;
    const std::int32_t* start = nullptr;
    const std::int32_t* taps = nullptr;
    const std::int32_t* weights = nullptr;
};

// One image's resize into its slot: the decoded RGB8 HWC source, the rows of the horizontal pass (source rows
// [first_row, first_row + row_count), placed columns only, RGB8).
struct ResampleJob {
    const std::uint8_t* source = nullptr;
    std::int32_t source_width = 0;
    std::int32_t slot = 0;
    std::int32_t first_row = 0;
    std::int32_t row_count = 0;
    ResampleAxis x;
    ResampleAxis y;
    std::uint8_t* rows = nullptr;
};

// The batch tensor's format: width x height x 3 per slot, NCHW or NHWC, each element `element_bytes` copied from
// table[(output channel * 256 + pixel) * element_bytes]; output channel o reads RGB channel (bgr ? 2 - o : o).
struct ResampleOutput {
    std::int32_t width = 0;
    std::int32_t height = 0;
    bool nchw = true;
    bool bgr = false;
    std::int32_t element_bytes = 4;
    std::uint8_t fill = 0;  // outside the placed part (letterbox)
    const std::uint8_t* table = nullptr;
};

// sum over the taps of weight * value, started at one half, in fixed point; clamped to 0..255.
INFERBENCH_HOST_DEVICE std::uint8_t resample_fixed(const std::uint8_t* first, std::int64_t stride,
                                                   const std::int32_t* weights, std::int32_t count) {
    std::int32_t sum = std::int32_t{1} << (kResampleWeightBits - 1);
    for (std::int32_t t = 0; t < count; ++t) sum += static_cast<std::int32_t>(first[t * stride]) * weights[t];
    sum >>= kResampleWeightBits;
    return static_cast<std::uint8_t>(sum < 0 ? 0 : (sum > 255 ? 255 : sum));
}

// Element i of the horizontal pass (i < row_count * x.placed_count * 3): row, column, channel.
INFERBENCH_HOST_DEVICE void horizontal_element(const ResampleJob& job, std::int64_t i) {
    const auto c = static_cast<std::int32_t>(i % 3);
    const auto x = static_cast<std::int32_t>((i / 3) % job.x.placed_count);
    const std::int64_t r = i / (3LL * job.x.placed_count);
    const std::uint8_t* first = job.source + ((job.first_row + r) * job.source_width + job.x.start[x]) * 3 + c;
    job.rows[i] =
        resample_fixed(first, 3, job.x.weights + static_cast<std::int64_t>(x) * job.x.max_taps, job.x.taps[x]);
}

// Element i of the job's slot (i < width * height * 3, in the tensor's own order): the vertical pass at that
// position, or the fill, looked up in the table and stored.
INFERBENCH_HOST_DEVICE void output_element(const ResampleJob& job, const ResampleOutput& out, std::int64_t i,
                                           std::uint8_t* batch) {
    const std::int64_t plane = static_cast<std::int64_t>(out.width) * out.height;
    const auto o = static_cast<std::int32_t>(out.nchw ? i / plane : i % 3);
    const std::int64_t pixel = out.nchw ? i % plane : i / 3;
    const auto py = static_cast<std::int32_t>(pixel / out.width) - job.y.placed_begin;
    const auto px = static_cast<std::int32_t>(pixel % out.width) - job.x.placed_begin;
    const std::int32_t rgb = out.bgr ? 2 - o : o;
    std::uint8_t value = out.fill;
    if (py >= 0 && py < job.y.placed_count && px >= 0 && px < job.x.placed_count) {
        const std::int64_t row_bytes = 3LL * job.x.placed_count;
        const std::uint8_t* first = job.rows + (job.y.start[py] - job.first_row) * row_bytes + px * 3LL + rgb;
        value = resample_fixed(first, row_bytes, job.y.weights + static_cast<std::int64_t>(py) * job.y.max_taps,
                               job.y.taps[py]);
    }
    const std::uint8_t* from = out.table + (static_cast<std::int64_t>(o) * 256 + value) * out.element_bytes;
    std::uint8_t* to = batch + (static_cast<std::int64_t>(job.slot) * plane * 3 + i) * out.element_bytes;
    for (std::int32_t b = 0; b < out.element_bytes; ++b) to[b] = from[b];
}

// Intersection over union of two [x1, y1, x2, y2] boxes as torchvision's CPU kernel computes it: two zero-area
// boxes give 0/0 = NaN, which suppresses nothing (NaN > threshold is false).
INFERBENCH_HOST_DEVICE float box_iou(const float* a, const float* b) {
    const float area_a = (a[2] - a[0]) * (a[3] - a[1]);
    const float area_b = (b[2] - b[0]) * (b[3] - b[1]);
    const float left = a[0] > b[0] ? a[0] : b[0];
    const float top = a[1] > b[1] ? a[1] : b[1];
    const float right = a[2] < b[2] ? a[2] : b[2];
    const float bottom = a[3] < b[3] ? a[3] : b[3];
    const float w = right - left > 0.0F ? right - left : 0.0F;
    const float h = bottom - top > 0.0F ? bottom - top : 0.0F;
    const float inter = w * h;
    return inter / (area_a + area_b - inter);
}

// torchvision's batched_nms keeps classes apart by moving each box by class * (largest coordinate + 1) while it has
// at most 1000 boxes (4000 coordinates), else runs one NMS per class; the moved coordinates' rounding decides ties
// at the threshold, so the GPU moves them the same way.
inline constexpr std::int64_t kOffsetTrickMaxCandidates = 1000;

INFERBENCH_HOST_DEVICE void moved_box(const float* box, std::int32_t label, float offset_unit, float* out) {
    const float offset = static_cast<float>(label) * offset_unit;
    for (int k = 0; k < 4; ++k) out[k] = box[k] + offset;
}

// Whether the candidate at `later` (in score order) is suppressed by the one at `earlier`: the same class (by label,
// or through the moved boxes where offset_unit is not 0) and IoU above the threshold.
INFERBENCH_HOST_DEVICE bool suppresses(const float* earlier_box, std::int32_t earlier_label, const float* later_box,
                                       std::int32_t later_label, float offset_unit, float iou_threshold) {
    if (offset_unit != 0.0F) {
        float a[4];
        float b[4];
        moved_box(earlier_box, earlier_label, offset_unit, a);
        moved_box(later_box, later_label, offset_unit, b);
        return box_iou(a, b) > iou_threshold;
    }
    return earlier_label == later_label && box_iou(earlier_box, later_box) > iou_threshold;
}

// A candidate's sort key: higher score first, then the lower index (a stable descending sort, as pipeline/nms's
// order_by_score). For non-negative floats the bit pattern orders as the value; negative scores below them.
INFERBENCH_HOST_DEVICE std::uint64_t nms_sort_key(float score, std::uint32_t index) {
#if defined(__CUDA_ARCH__)
    const std::uint32_t bits = __float_as_uint(score);
#else
    std::uint32_t bits = 0;
    __builtin_memcpy(&bits, &score, sizeof bits);
#endif
    const std::uint32_t ordered = (bits & 0x80000000U) ? ~bits : (bits | 0x80000000U);
    return (static_cast<std::uint64_t>(ordered) << 32) | (0xFFFFFFFFU - index);
}

// The SSD box coders of pipeline/box_decoding, operation for operation; priors (cx, cy, w, h) in [0, 1], the box in
// the input's pixels. `exp_fn` is expf on the GPU, std::exp on the host (they may differ in the last bit).
// TF object detection (ssd-mobilenet): code (ty, tx, th, tw), scale factors 10, 10, 5, 5.
template <typename Exp>
INFERBENCH_HOST_DEVICE void decode_ssd_tf_box(const float code[4], const float prior[4], float width, float height,
                                              Exp exp_fn, float box[4]) {
    const float cy = code[0] / 10.0F * prior[3] + prior[1];
    const float cx = code[1] / 10.0F * prior[2] + prior[0];
    const float bh = exp_fn(code[2] / 5.0F) * prior[3];
    const float bw = exp_fn(code[3] / 5.0F) * prior[2];
    box[0] = (cx - 0.5F * bw) * width;
    box[1] = (cy - 0.5F * bh) * height;
    box[2] = (cx + 0.5F * bw) * width;
    box[3] = (cy + 0.5F * bh) * height;
}

// MLPerf's SSD-ResNet34: loc (x, y, w, h), scales 0.1 and 0.2.
template <typename Exp>
INFERBENCH_HOST_DEVICE void decode_ssd_r34_box(const float loc[4], const float prior[4], float width, float height,
                                               Exp exp_fn, float box[4]) {
    const float cx = 0.1F * loc[0] * prior[2] + prior[0];
    const float cy = 0.1F * loc[1] * prior[3] + prior[1];
    const float bw = exp_fn(0.2F * loc[2]) * prior[2];
    const float bh = exp_fn(0.2F * loc[3]) * prior[3];
    box[0] = (cx - 0.5F * bw) * width;
    box[1] = (cy - 0.5F * bh) * height;
    box[2] = (cx + 0.5F * bw) * width;
    box[3] = (cy + 0.5F * bh) * height;
}

}  // namespace inferbench::pipeline
