#include "pipeline/resize.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench::pipeline {
namespace {

// Python's round(): half to even (torchvision's CenterCrop offset, ultralytics' letterbox size).
std::int64_t round_half_even(double value) { return static_cast<std::int64_t>(std::nearbyint(value)); }

void require_positive(ImageSize size, std::string_view what) {
    if (size.width <= 0 || size.height <= 0)
        throw std::invalid_argument(fmt::format("cannot resize: the {} is {}x{}", what, size.width, size.height));
}

ResizeGeometry shorter_side_crop(ImageSize source, const PipelineSteps& steps) {
    const ImageSize crop = steps.input_size;
    const std::int64_t shorter = steps.resize_shorter > 0 ? steps.resize_shorter : std::max(crop.width, crop.height);
    ResizeGeometry g;
    if (source.width <= source.height)
        g.scaled = {shorter, shorter * source.height / source.width};
    else
        g.scaled = {shorter * source.width / source.height, shorter};
    if (g.scaled.width < crop.width || g.scaled.height < crop.height)
        throw std::invalid_argument(
            fmt::format("cannot crop {} out of the image scaled to {}: resize_shorter {} is "
                        "smaller than the input size",
                        to_string(crop), to_string(g.scaled), shorter));
    g.crop_x = round_half_even(static_cast<double>(g.scaled.width - crop.width) / 2.0);
    g.crop_y = round_half_even(static_cast<double>(g.scaled.height - crop.height) / 2.0);
    g.kept = crop;
    g.output = crop;
    return g;
}

ResizeGeometry letterbox(ImageSize source, const PipelineSteps& steps) {
    const ImageSize out = steps.input_size;
    const double ratio = std::min(static_cast<double>(out.width) / static_cast<double>(source.width),
                                  static_cast<double>(out.height) / static_cast<double>(source.height));
    ResizeGeometry g;
    g.scaled = {std::clamp<std::int64_t>(round_half_even(static_cast<double>(source.width) * ratio), 1, out.width),
                std::clamp<std::int64_t>(round_half_even(static_cast<double>(source.height) * ratio), 1, out.height)};
    g.kept = g.scaled;
    g.pad_x = (out.width - g.scaled.width) / 2;
    g.pad_y = (out.height - g.scaled.height) / 2;
    g.output = out;
    return g;
}

double triangle(double x) {
    x = std::abs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

std::int32_t to_fixed(double weight) {
    const double scaled = weight * static_cast<double>(std::int64_t{1} << kResizeWeightBits);
    return static_cast<std::int32_t>(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
}

std::uint8_t clip_fixed(std::int32_t sum) {
    return static_cast<std::uint8_t>(std::clamp(sum >> kResizeWeightBits, 0, 255));
}

constexpr std::int32_t kHalf = std::int32_t{1} << (kResizeWeightBits - 1);

// True where the axis is not scaled and the window is all of it: the filter is then the identity.
bool identity_axis(std::int64_t source_length, std::int64_t scaled_length, std::int64_t first, std::int64_t count) {
    return source_length == scaled_length && first == 0 && count == source_length;
}

// The horizontal pass over source rows [row_first, row_first + row_count): 3 channels a pixel.
void horizontal_pass(const RgbImage& source, std::int64_t row_first, std::int64_t row_count, const ResizeWeights& w,
                     std::int64_t out_width, std::uint8_t* out) {
    for (std::int64_t y = 0; y < row_count; ++y) {
        const std::uint8_t* row = source.pixels.data() + (row_first + y) * source.width * 3;
        std::uint8_t* dst = out + y * out_width * 3;
        for (std::int64_t x = 0; x < out_width; ++x) {
            const std::int32_t* k = w.weights.data() + x * w.max_taps;
            const std::uint8_t* src = row + std::int64_t{w.start[static_cast<std::size_t>(x)]} * 3;
            std::int32_t r = kHalf, g = kHalf, b = kHalf;
            for (std::int32_t t = 0; t < w.taps[static_cast<std::size_t>(x)]; ++t) {
                r += src[t * 3] * k[t];
                g += src[t * 3 + 1] * k[t];
                b += src[t * 3 + 2] * k[t];
            }
            dst[x * 3] = clip_fixed(r);
            dst[x * 3 + 1] = clip_fixed(g);
            dst[x * 3 + 2] = clip_fixed(b);
        }
    }
}

// The vertical pass: `rows` holds the horizontal pass's rows from `row_first` on, `row_bytes` each; output row y
// goes to out + y * out_stride.
void vertical_pass(const std::uint8_t* rows, std::int64_t row_first, std::int64_t row_bytes, const ResizeWeights& w,
                   std::int64_t out_rows, std::uint8_t* out, std::int64_t out_stride, std::vector<std::int32_t>& acc) {
    acc.resize(static_cast<std::size_t>(row_bytes));
    for (std::int64_t y = 0; y < out_rows; ++y) {
        std::fill(acc.begin(), acc.end(), kHalf);
        const std::int32_t* k = w.weights.data() + y * w.max_taps;
        const std::int64_t start = w.start[static_cast<std::size_t>(y)] - row_first;
        for (std::int32_t t = 0; t < w.taps[static_cast<std::size_t>(y)]; ++t) {
            const std::uint8_t* src = rows + (start + t) * row_bytes;
            const std::int32_t weight = k[t];
            for (std::int64_t i = 0; i < row_bytes; ++i) acc[static_cast<std::size_t>(i)] += src[i] * weight;
        }
        std::uint8_t* dst = out + y * out_stride;
        for (std::int64_t i = 0; i < row_bytes; ++i) dst[i] = clip_fixed(acc[static_cast<std::size_t>(i)]);
    }
}

thread_local std::vector<std::int32_t> tl_accumulator;

// The kept window of the scaled image written to `out` (rows out_stride bytes apart).
void resize_into(const RgbImage& source, const ResizeGeometry& g, std::uint8_t* out, std::int64_t out_stride,
                 ResizeScratch& scratch) {
    const bool same_x = identity_axis(source.width, g.scaled.width, g.crop_x, g.kept.width);
    const bool same_y = identity_axis(source.height, g.scaled.height, g.crop_y, g.kept.height);
    scratch.horizontal = resize_weights(source.width, g.scaled.width, g.crop_x, g.kept.width);
    scratch.vertical = resize_weights(source.height, g.scaled.height, g.crop_y, g.kept.height);
    const ResizeWeights& v = scratch.vertical;
    const std::int64_t row_first = same_y ? 0 : v.start.front();
    const std::int64_t row_last = same_y ? source.height : v.start.back() + v.taps.back();
    const std::int64_t row_count = row_last - row_first;
    const std::int64_t row_bytes = g.kept.width * 3;
    const std::uint8_t* rows = nullptr;
    if (same_x) {
        rows = source.pixels.data() + row_first * row_bytes;
    } else {
        scratch.rows.resize(static_cast<std::size_t>(row_count * row_bytes));
        horizontal_pass(source, row_first, row_count, scratch.horizontal, g.kept.width, scratch.rows.data());
        rows = scratch.rows.data();
    }
    if (same_y) {
        for (std::int64_t y = 0; y < g.kept.height; ++y)
            std::copy_n(rows + y * row_bytes, row_bytes, out + y * out_stride);
        return;
    }
    vertical_pass(rows, row_first, row_bytes, v, g.kept.height, out, out_stride, tl_accumulator);
}

}  // namespace

ResizeGeometry resize_geometry(ImageSize source, const PipelineSteps& steps) {
    require_positive(source, "image");
    require_positive(steps.input_size, "input size");
    switch (steps.resize) {
        case ResizeRule::shorter_side_crop:
            return shorter_side_crop(source, steps);
        case ResizeRule::letterbox:
            return letterbox(source, steps);
        case ResizeRule::plain:
            break;
    }
    ResizeGeometry g;
    g.scaled = steps.input_size;
    g.kept = steps.input_size;
    g.output = steps.input_size;
    return g;
}

// Each output sample's source span and triangle weights: the filter's support widened by the downscale factor
// (the antialiasing), sample centres at half-integers, weights normalised to 1 and then made fixed point.
ResizeWeights resize_weights(std::int64_t source_length, std::int64_t scaled_length, std::int64_t first,
                             std::int64_t count) {
    const double scale = static_cast<double>(source_length) / static_cast<double>(scaled_length);
    const double filter_scale = std::max(scale, 1.0);
    const double support = filter_scale;  // the triangle's support is 1
    const double inverse_scale = 1.0 / filter_scale;
    ResizeWeights w;
    w.max_taps = static_cast<std::int64_t>(std::ceil(support)) * 2 + 1;
    w.start.resize(static_cast<std::size_t>(count));
    w.taps.resize(static_cast<std::size_t>(count));
    w.weights.assign(static_cast<std::size_t>(count * w.max_taps), 0);
    std::vector<double> k(static_cast<std::size_t>(w.max_taps));
    for (std::int64_t i = 0; i < count; ++i) {
        const double center = (static_cast<double>(first + i) + 0.5) * scale;
        const auto lo = std::max<std::int64_t>(static_cast<std::int64_t>(center - support + 0.5), 0);
        const auto hi = std::min<std::int64_t>(static_cast<std::int64_t>(center + support + 0.5), source_length);
        const std::int64_t taps = std::min(hi - lo, w.max_taps);
        double total = 0.0;
        for (std::int64_t t = 0; t < taps; ++t) {
            k[static_cast<std::size_t>(t)] = triangle((static_cast<double>(t + lo) - center + 0.5) * inverse_scale);
            total += k[static_cast<std::size_t>(t)];
        }
        const auto at = static_cast<std::size_t>(i);
        w.start[at] = static_cast<std::int32_t>(lo);
        w.taps[at] = static_cast<std::int32_t>(taps);
        for (std::int64_t t = 0; t < taps; ++t)
            w.weights[static_cast<std::size_t>(i * w.max_taps + t)] =
                to_fixed(total != 0.0 ? k[static_cast<std::size_t>(t)] / total : 0.0);
    }
    return w;
}

void resize_window(const RgbImage& source, const ResizeGeometry& geometry, RgbImage& out, ResizeScratch& scratch) {
    out.reshape(geometry.kept);
    resize_into(source, geometry, out.pixels.data(), geometry.kept.width * 3, scratch);
}

void resize_image(const RgbImage& source, const PipelineSteps& steps, RgbImage& out, ResizeScratch& scratch) {
    const ResizeGeometry g = resize_geometry(source.size(), steps);
    out.reshape(g.output);
    const bool padded = g.kept != g.output;
    if (padded) {
        const auto fill = static_cast<std::uint8_t>(std::clamp(std::lround(steps.letterbox_fill), 0L, 255L));
        std::fill(out.pixels.begin(), out.pixels.end(), fill);
    }
    const std::int64_t stride = g.output.width * 3;
    resize_into(source, g, out.pixels.data() + g.pad_y * stride + g.pad_x * 3, stride, scratch);
}

}  // namespace inferbench::pipeline
