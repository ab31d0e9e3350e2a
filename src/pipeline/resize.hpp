// Resizing an RGB8 image to a model's input size by one of the three rules (core/pipeline's ResizeRule), with the
// antialiased bilinear filter of Pillow's Image.resize(BILINEAR) and torchvision's resize(antialias=True): a
// triangle filter whose support grows with the downscale factor, separable, horizontal pass first, 8-bit
// intermediate, fixed-point weights of 22 fraction bits rounded half up. Matches Pillow exactly on the tests'
// images and torchvision 0.14 within 1 per channel value (tests/pipeline/image_reference_test.cpp).
//
// The weights are public (resize_weights) so that the GPU kernels use the same table.
#pragma once

#include <cstdint>
#include <vector>

#include "core/pipeline.hpp"
#include "pipeline/image_codec.hpp"

namespace inferbench::pipeline {

// Where the resized image goes: the whole source scaled to `scaled`; of that, the window at (crop_x, crop_y) of
// size `kept` is kept and written at (pad_x, pad_y) of the `output`; the rest of the output is the fill.
//  * shorter_side_crop: the shorter side scaled to resize_shorter (0: the larger side of the input size), the
//    other side in proportion and truncated (torchvision's Resize(int)); the centre cropped to the input size,
//    its offset (scaled - input) / 2 rounded half to even (torchvision's CenterCrop);
//  * letterbox: scaled by min(out_w / w, out_h / h), each side rounded (at least 1), centred with the left/top
//    padding (out - scaled) / 2 rounded down (ultralytics' letterbox);
//  * plain: scaled to the input size.
struct ResizeGeometry {
    ImageSize scaled;
    std::int64_t crop_x = 0;
    std::int64_t crop_y = 0;
    ImageSize kept;
    std::int64_t pad_x = 0;
    std::int64_t pad_y = 0;
    ImageSize output;
    friend bool operator==(const ResizeGeometry&, const ResizeGeometry&) = default;
};

// Throws std::invalid_argument for an empty source or input size, or a crop larger than the scaled image.
ResizeGeometry resize_geometry(ImageSize source, const PipelineSteps& steps);

inline constexpr int kResizeWeightBits = 22;

// One axis's filter: output position i (of `count`, starting at `first` of the scaled axis) reads `taps[i]`
// source samples from `start[i]`, weighted by weights[i * max_taps + j] (fixed point, kResizeWeightBits
// fraction bits, summing to about 1 << kResizeWeightBits).
struct ResizeWeights {
    std::int64_t max_taps = 0;
    std::vector<std::int32_t> start;
    std::vector<std::int32_t> taps;
    std::vector<std::int32_t> weights;
};

// The weights scaling an axis of `source_length` samples to `scaled_length`, for outputs first..first+count-1.
ResizeWeights resize_weights(std::int64_t source_length, std::int64_t scaled_length, std::int64_t first,
                             std::int64_t count);

// Buffers one thread reuses from image to image.
struct ResizeScratch {
    std::vector<std::uint8_t> rows;  // the horizontal pass's output
    ResizeWeights horizontal;
    ResizeWeights vertical;
};

// `source` resized by the steps' rule into `out` (steps.input_size; letterbox's padding steps.letterbox_fill
// rounded to 0..255). Throws std::invalid_argument as resize_geometry.
void resize_image(const RgbImage& source, const PipelineSteps& steps, RgbImage& out, ResizeScratch& scratch);

// The geometry's scaled image, only its kept window, into `out` (size geometry.kept): the core of resize_image.
void resize_window(const RgbImage& source, const ResizeGeometry& geometry, RgbImage& out, ResizeScratch& scratch);

}  // namespace inferbench::pipeline
