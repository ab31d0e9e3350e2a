#include "pipeline/resize_plan.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::pipeline {
namespace {

// Python's round(): halves to even (torchvision's centre crop and the letterbox's padding use it).
std::int64_t round_half_even(double value) { return static_cast<std::int64_t>(std::nearbyint(value)); }

AxisPlacement whole_axis(std::int64_t source, std::int64_t output) { return {source, output, 0, 0, output}; }

// torchvision's Resize(shorter) then CenterCrop(input): the longer side truncated as torchvision computes it.
ImagePlacement place_shorter_side_crop(const PipelineSteps& steps, ImageSize image) {
    const std::int64_t shorter = steps.resize_shorter > 0
                                     ? steps.resize_shorter
                                     : std::min(steps.input_size.width, steps.input_size.height);
    const bool wide = image.width >= image.height;
    const std::int64_t short_side = wide ? image.height : image.width;
    const std::int64_t long_side = wide ? image.width : image.height;
    const auto scaled_long = static_cast<std::int64_t>(static_cast<double>(shorter) * static_cast<double>(long_side) /
                                                       static_cast<double>(short_side));
    const ImageSize scaled = wide ? ImageSize{scaled_long, shorter} : ImageSize{shorter, scaled_long};
    if (scaled.width < steps.input_size.width || scaled.height < steps.input_size.height)
        throw UserError(fmt::format("resize_shorter {} scales a {}x{} image to {}x{}, smaller than the {}x{} crop; "
                                    "set pipeline.steps.resize_shorter to at least the input's sides",
                                    shorter, image.width, image.height, scaled.width, scaled.height,
                                    steps.input_size.width, steps.input_size.height));
    const auto crop = [](std::int64_t source, std::int64_t scaled_side, std::int64_t output) {
        const std::int64_t offset = round_half_even(static_cast<double>(scaled_side - output) / 2.0);
        return AxisPlacement{source, scaled_side, offset, 0, output};
    };
    return {crop(image.width, scaled.width, steps.input_size.width),
            crop(image.height, scaled.height, steps.input_size.height)};
}

// Ultralytics' LetterBox (auto=False, scaleup=True): scaled by the smaller ratio, centred, the padding split with
// round(d - 0.1) before it.
ImagePlacement place_letterbox(const PipelineSteps& steps, ImageSize image) {
    const double ratio = std::min(static_cast<double>(steps.input_size.width) / static_cast<double>(image.width),
                                  static_cast<double>(steps.input_size.height) / static_cast<double>(image.height));
    const auto axis = [ratio](std::int64_t source, std::int64_t output) {
        const std::int64_t scaled = std::clamp<std::int64_t>(
            round_half_even(static_cast<double>(source) * ratio), 1, output);
        const std::int64_t begin = round_half_even(static_cast<double>(output - scaled) / 2.0 - 0.1);
        return AxisPlacement{source, scaled, 0, begin, scaled};
    };
    return {axis(image.width, steps.input_size.width), axis(image.height, steps.input_size.height)};
}

}  // namespace

ImagePlacement place_image(const PipelineSteps& steps, ImageSize image) {
    if (image.width <= 0 || image.height <= 0)
        throw UserError(fmt::format("cannot resize an image of {}x{} pixels", image.width, image.height));
    if (steps.input_size.width <= 0 || steps.input_size.height <= 0)
        throw UserError(fmt::format("the model's input size {}x{} is empty", steps.input_size.width,
                                    steps.input_size.height));
    switch (steps.resize) {
        case ResizeRule::shorter_side_crop: return place_shorter_side_crop(steps, image);
        case ResizeRule::letterbox: return place_letterbox(steps, image);
        case ResizeRule::plain: break;
    }
    return {whole_axis(image.width, steps.input_size.width), whole_axis(image.height, steps.input_size.height)};
}

// Pillow's antialiased bilinear: the triangle filter's support widened by the downscale factor; centres at
// (i + 0.5) * scale; weights normalised to sum 1; computed in double, stored as float.
AxisTaps axis_taps(const AxisPlacement& axis) {
    const double scale = static_cast<double>(axis.source) / static_cast<double>(axis.scaled);
    const double filter_scale = std::max(scale, 1.0);
    const double support = filter_scale;
    AxisTaps out;
    out.taps.reserve(static_cast<std::size_t>(axis.placed_count));
    std::vector<double> w;
    for (std::int64_t i = 0; i < axis.placed_count; ++i) {
        const double center = (static_cast<double>(i + axis.crop_offset) + 0.5) * scale;
        const auto first = std::max<std::int64_t>(static_cast<std::int64_t>(center - support + 0.5), 0);
        const auto last = std::min<std::int64_t>(static_cast<std::int64_t>(center + support + 0.5), axis.source);
        w.clear();
        double total = 0.0;
        for (std::int64_t j = first; j < last; ++j) {
            const double t = std::abs((static_cast<double>(j) - center + 0.5) / filter_scale);
            const double weight = t < 1.0 ? 1.0 - t : 0.0;
            w.push_back(weight);
            total += weight;
        }
        ResampleTap tap{static_cast<std::int32_t>(first), static_cast<std::int32_t>(w.size()),
                        static_cast<std::int32_t>(out.weights.size())};
        for (const double weight : w) out.weights.push_back(static_cast<float>(total > 0.0 ? weight / total : 0.0));
        out.taps.push_back(tap);
    }
    return out;
}

ResizePlan make_resize_plan(const PipelineSteps& steps, ImageSize image) {
    ResizePlan plan;
    plan.placement = place_image(steps, image);
    plan.x = axis_taps(plan.placement.x);
    plan.y = axis_taps(plan.placement.y);
    std::int64_t first = image.height;
    std::int64_t end = 0;
    for (const auto& tap : plan.y.taps) {
        if (tap.count == 0) continue;
        first = std::min<std::int64_t>(first, tap.first);
        end = std::max<std::int64_t>(end, tap.first + tap.count);
    }
    plan.first_row = end > first ? first : 0;
    plan.row_count = end > first ? end - first : 0;
    return plan;
}

std::vector<std::uint8_t> resample_rgb8(const ResizePlan& plan, const std::uint8_t* source) {
    const auto width = static_cast<std::size_t>(plan.placement.x.placed_count);
    const auto height = static_cast<std::size_t>(plan.placement.y.placed_count);
    const auto source_width = plan.placement.x.source;
    std::vector<std::uint8_t> rows(static_cast<std::size_t>(plan.row_count) * width * 3);
    for (std::int64_t r = 0; r < plan.row_count; ++r) {
        const std::uint8_t* line = source + (plan.first_row + r) * source_width * 3;
        for (std::size_t x = 0; x < width; ++x) {
            const ResampleTap& tap = plan.x.taps[x];
            for (int c = 0; c < 3; ++c)
                rows[(static_cast<std::size_t>(r) * width + x) * 3 + static_cast<std::size_t>(c)] = resample_taps(
                    line + tap.first * 3 + c, 3, plan.x.weights.data() + tap.weight_offset, tap.count);
        }
    }
    std::vector<std::uint8_t> out(width * height * 3);
    const auto row_stride = static_cast<std::int64_t>(width * 3);
    for (std::size_t y = 0; y < height; ++y) {
        const ResampleTap& tap = plan.y.taps[y];
        for (std::size_t x = 0; x < width; ++x)
            for (int c = 0; c < 3; ++c)
                out[(y * width + x) * 3 + static_cast<std::size_t>(c)] = resample_taps(
                    rows.data() + (tap.first - plan.first_row) * row_stride + static_cast<std::int64_t>(x * 3) + c,
                    row_stride, plan.y.weights.data() + tap.weight_offset, tap.count);
    }
    return out;
}

std::uint16_t float_to_half(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
    const std::uint32_t magnitude = bits & 0x7FFFFFFFU;
    if (magnitude > 0x7F800000U) return static_cast<std::uint16_t>(sign | 0x7E00U);  // NaN
    if (magnitude >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U);  // rounds to infinity
    if (magnitude < 0x38800000U) {  // a subnormal half (or zero): scale by 2^24 and round to an integer
        const float scaled = std::bit_cast<float>(magnitude) * 16777216.0F;
        return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
    }
    // Normal: drop 13 mantissa bits with round to nearest even; a carry moves into the exponent correctly.
    const std::uint32_t rebased = magnitude - 0x38000000U;
    const std::uint32_t rounded = rebased + 0x0FFFU + ((rebased >> 13) & 1U);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(rounded >> 13));
}

namespace {

void store_value(const PipelineSteps& steps, std::uint8_t* batch_bytes, std::int64_t index, std::uint8_t pixel,
                 int channel) {
    switch (steps.pixel_type) {
        case PixelType::u8: batch_bytes[index] = pixel; return;
        case PixelType::f16: {
            const std::uint16_t half = float_to_half(normalize_value(pixel, steps.mean[static_cast<std::size_t>(channel)],
                                                                     steps.std[static_cast<std::size_t>(channel)]));
            __builtin_memcpy(batch_bytes + index * 2, &half, 2);
            return;
        }
        case PixelType::f32: {
            const float v = normalize_value(pixel, steps.mean[static_cast<std::size_t>(channel)],
                                            steps.std[static_cast<std::size_t>(channel)]);
            __builtin_memcpy(batch_bytes + index * 4, &v, 4);
            return;
        }
    }
}

}  // namespace

void write_normalized(const PipelineSteps& steps, const ImagePlacement& placement,
                      const std::vector<std::uint8_t>& resampled, std::int64_t slot, std::uint8_t* batch_bytes) {
    const std::int64_t width = steps.input_size.width;
    const std::int64_t height = steps.input_size.height;
    const bool nchw = steps.layout == TensorLayout::nchw;
    const std::uint8_t fill = round_to_u8(steps.letterbox_fill);
    for (std::int64_t y = 0; y < height; ++y) {
        const std::int64_t py = y - placement.y.placed_begin;
        const bool row_inside = py >= 0 && py < placement.y.placed_count;
        for (std::int64_t x = 0; x < width; ++x) {
            const std::int64_t px = x - placement.x.placed_begin;
            const bool inside = row_inside && px >= 0 && px < placement.x.placed_count;
            for (int c = 0; c < 3; ++c) {
                const int source_channel = steps.bgr ? 2 - c : c;
                const std::uint8_t pixel =
                    inside ? resampled[static_cast<std::size_t>((py * placement.x.placed_count + px) * 3 + source_channel)]
                           : fill;
                store_value(steps, batch_bytes, tensor_offset(nchw, slot, c, y, x, height, width), pixel,
                            source_channel);
            }
        }
    }
}

}  // namespace inferbench::pipeline
