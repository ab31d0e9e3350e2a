// The per-pixel arithmetic of resizing, normalising and box overlap, written once for the CPU stages and the GPU
// kernels (pipeline/gpu_cuda compiles this header with nvcc): the same operations in the same order give the same
// values on both, so the GPU stages are compared with the CPU ones against tight tolerances. Plain C++ with no
// library calls, so that it compiles as device code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define INFERBENCH_HOST_DEVICE __host__ __device__ inline
#else
#define INFERBENCH_HOST_DEVICE inline
#endif

namespace inferbench::pipeline {

// One output pixel's taps along an axis: the first source index and how many weights follow at weight_offset in
// the axis's weight table (see resize_plan.hpp).
struct ResampleTap {
    std::int32_t first = 0;
    std::int32_t count = 0;
    std::int32_t weight_offset = 0;
};

// A weighted sum rounded half up and clamped to 0..255, as Pillow stores each pass of its 8-bit resampling.
INFERBENCH_HOST_DEVICE std::uint8_t round_to_u8(float value) {
    const float rounded = value + 0.5F;
    if (!(rounded > 0.0F)) return 0;  // also NaN
    if (rounded >= 255.0F) return 255;
    return static_cast<std::uint8_t>(rounded);
}

// sum over the taps of weight * value, in tap order: `stride` elements between two taps' values.
INFERBENCH_HOST_DEVICE std::uint8_t resample_taps(const std::uint8_t* first_value, std::int64_t stride,
                                                  const float* weights, std::int32_t count) {
    float sum = 0.0F;
    for (std::int32_t j = 0; j < count; ++j) sum += weights[j] * static_cast<float>(first_value[j * stride]);
    return round_to_u8(sum);
}

// (value - mean) / std on 0..255 values, as the model's input wants it.
INFERBENCH_HOST_DEVICE float normalize_value(std::uint8_t value, float mean, float std_dev) {
    return (static_cast<float>(value) - mean) / std_dev;
}

// The element index of (channel, y, x) of image `slot` in a batch tensor of `channels` x height x width.
INFERBENCH_HOST_DEVICE std::int64_t tensor_offset(bool nchw, std::int64_t slot, std::int64_t channel,
                                                  std::int64_t y, std::int64_t x, std::int64_t height,
                                                  std::int64_t width) {
    const std::int64_t image = slot * 3 * height * width;
    return nchw ? image + (channel * height + y) * width + x : image + (y * width + x) * 3 + channel;
}

// Intersection over union of two [x1, y1, x2, y2] boxes, as torchvision.ops.box_iou computes it: a zero-area pair
// gives 0/0 = NaN, which suppresses nothing (NaN > threshold is false).
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

// A candidate's sort key for NMS: higher score first, then the lower candidate index (a stable descending sort,
// which is what torchvision's CPU sort gives ties). Scores are compared through their bits: for non-negative
// floats the bit pattern orders as the value does; a negative score is kept below every non-negative one.
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

}  // namespace inferbench::pipeline

namespace inferbench::pipeline {

// A centre-size box encoding decoded against its prior (SSD): centre = prior centre + delta / center_scale * prior
// size, size = prior size * exp(delta / size_scale); deltas and priors in (x, y, w, h) order, or (y, x, h, w) where
// yx_order; the box out as x1, y1, x2, y2. exp is the caller's (expf on the GPU, std::exp on the host).
template <typename Exp>
INFERBENCH_HOST_DEVICE void decode_center_size(const float delta[4], const float prior[4], bool yx_order,
                                               float center_scale, float size_scale, Exp exp_fn, float box[4]) {
    const int ix = yx_order ? 1 : 0;
    const int iy = yx_order ? 0 : 1;
    const float cx = prior[ix] + delta[ix] / center_scale * prior[ix + 2];
    const float cy = prior[iy] + delta[iy] / center_scale * prior[iy + 2];
    const float w = prior[ix + 2] * exp_fn(delta[ix + 2] / size_scale);
    const float h = prior[iy + 2] * exp_fn(delta[iy + 2] / size_scale);
    box[0] = cx - w / 2.0F;
    box[1] = cy - h / 2.0F;
    box[2] = cx + w / 2.0F;
    box[3] = cy + h / 2.0F;
}

}  // namespace inferbench::pipeline
