// Where an image lands in the model's input and which source pixels make each output pixel: the resize rule's
// geometry (shorter side + centre crop, letterbox, plain) and the antialiased bilinear filter's taps per output
// column and row (Pillow's BILINEAR: a triangle filter widened by the downscale factor, weights normalised to
// sum 1). The CPU resize and the GPU kernels both run over a ResizePlan, so the arithmetic is written once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/pipeline.hpp"
#include "pipeline/resample_math.hpp"

namespace inferbench::pipeline {

// One axis: the source extent, the extent the whole source is scaled to, the offset of the kept part inside the
// scaled extent (a centre crop), and where the kept part lands in the model's input [placed_begin, +placed_count).
// Output indices outside it are the letterbox fill.
struct AxisPlacement {
    std::int64_t source = 0;
    std::int64_t scaled = 0;
    std::int64_t crop_offset = 0;
    std::int64_t placed_begin = 0;
    std::int64_t placed_count = 0;
    friend bool operator==(const AxisPlacement&, const AxisPlacement&) = default;
};

struct ImagePlacement {
    AxisPlacement x;
    AxisPlacement y;
    friend bool operator==(const ImagePlacement&, const ImagePlacement&) = default;
};

// The placement of a width x height image by the steps' rule into steps.input_size. Throws UserError for an empty
// image, or a centre crop larger than the scaled image (resize_shorter below the input size).
ImagePlacement place_image(const PipelineSteps& steps, ImageSize image);

// The filter taps of every placed output index of one axis (placed_count of them) and their weights.
struct AxisTaps {
    std::vector<ResampleTap> taps;
    std::vector<float> weights;
};
AxisTaps axis_taps(const AxisPlacement& axis);

// Both axes' taps, and the source rows the horizontal pass must produce: [first_row, first_row + row_count).
struct ResizePlan {
    ImagePlacement placement;
    AxisTaps x;
    AxisTaps y;
    std::int64_t first_row = 0;
    std::int64_t row_count = 0;
};
ResizePlan make_resize_plan(const PipelineSteps& steps, ImageSize image);

// The two passes on the host, in the kernels' order: each needed source row filtered horizontally into 8-bit
// values (placed columns only), then each placed output row filtered vertically. `source` is RGB8 HWC of
// plan.placement's source size; the result is RGB8 HWC of placed_count columns x placed_count rows.
std::vector<std::uint8_t> resample_rgb8(const ResizePlan& plan, const std::uint8_t* source);

// The model input of one image written into its slot of a batch tensor's bytes (steps' layout, pixel type, channel
// order, mean/std; the letterbox fill outside the placed part), from resample_rgb8's result.
void write_normalized(const PipelineSteps& steps, const ImagePlacement& placement,
                      const std::vector<std::uint8_t>& resampled, std::int64_t slot, std::uint8_t* batch_bytes);

// IEEE binary16 of a float, round to nearest even (the f16 pixel type on the host; the kernels use __float2half_rn,
// which rounds the same way).
std::uint16_t float_to_half(float value);

}  // namespace inferbench::pipeline
