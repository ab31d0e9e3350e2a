// The synthetic images' content: what a camera's photo has that a JPEG encoder pays for (smooth shading, objects
// with edges, texture at several scales, sensor noise), from a seed, in integer-exact steps where it matters.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "core/splitmix64.hpp"
#include "pipeline/image_source.hpp"

namespace inferbench::pipeline {
namespace {

float unit(SplitMix64& rng) { return (rng.next_signed_unit() + 1.0F) * 0.5F; }  // [0, 1)

using Planes = std::array<std::vector<float>, 3>;

// A diagonal blend between two random colours.
void shade(Planes& planes, ImageSize size, SplitMix64& rng) {
    std::array<float, 3> from{}, to{};
    for (std::size_t c = 0; c < 3; ++c) from[c] = 40.0F + 170.0F * unit(rng), to[c] = 40.0F + 170.0F * unit(rng);
    const float dx = rng.next_signed_unit(), dy = rng.next_signed_unit();
    const float norm =
        std::abs(dx) * static_cast<float>(size.width) + std::abs(dy) * static_cast<float>(size.height) + 1.0F;
    for (std::int64_t y = 0; y < size.height; ++y)
        for (std::int64_t x = 0; x < size.width; ++x) {
            const float t = 0.5F + (dx * static_cast<float>(x) + dy * static_cast<float>(y)) / norm;
            const auto at = static_cast<std::size_t>(y * size.width + x);
            for (std::size_t c = 0; c < 3; ++c) planes[c][at] = from[c] + (to[c] - from[c]) * t;
        }
}

// Value noise: random values on a grid of `cell` pixels, interpolated smoothly, added with `amplitude` to every
// channel (tinted a little per channel).
void add_noise_octave(Planes& planes, ImageSize size, std::int64_t cell, float amplitude, SplitMix64& rng) {
    const std::int64_t gw = size.width / cell + 2, gh = size.height / cell + 2;
    std::vector<float> grid(static_cast<std::size_t>(gw * gh));
    for (float& v : grid) v = rng.next_signed_unit();
    std::array<float, 3> tint{};
    for (float& t : tint) t = 0.7F + 0.6F * unit(rng);
    const float inv = 1.0F / static_cast<float>(cell);
    for (std::int64_t y = 0; y < size.height; ++y) {
        const std::int64_t gy = y / cell;
        float fy = static_cast<float>(y % cell) * inv;
        fy = fy * fy * (3.0F - 2.0F * fy);
        for (std::int64_t x = 0; x < size.width; ++x) {
            const std::int64_t gx = x / cell;
            float fx = static_cast<float>(x % cell) * inv;
            fx = fx * fx * (3.0F - 2.0F * fx);
            const auto g = [&](std::int64_t i, std::int64_t j) { return grid[static_cast<std::size_t>(j * gw + i)]; };
            const float top = g(gx, gy) + (g(gx + 1, gy) - g(gx, gy)) * fx;
            const float bottom = g(gx, gy + 1) + (g(gx + 1, gy + 1) - g(gx, gy + 1)) * fx;
            const float v = (top + (bottom - top) * fy) * amplitude;
            const auto at = static_cast<std::size_t>(y * size.width + x);
            for (std::size_t c = 0; c < 3; ++c) planes[c][at] += v * tint[c];
        }
    }
}

// Ellipses of flat colour with a soft edge of about two pixels, blended over what is there.
void add_shapes(Planes& planes, ImageSize size, SplitMix64& rng) {
    const auto w = static_cast<float>(size.width), h = static_cast<float>(size.height);
    const int count = 6 + static_cast<int>(unit(rng) * 8.0F);
    for (int s = 0; s < count; ++s) {
        const float cx = unit(rng) * w, cy = unit(rng) * h;
        const float rx = (0.03F + 0.25F * unit(rng)) * w + 1.0F, ry = (0.03F + 0.25F * unit(rng)) * h + 1.0F;
        const float alpha = 0.5F + 0.45F * unit(rng);
        std::array<float, 3> colour{};
        for (float& c : colour) c = 255.0F * unit(rng);
        const auto x0 = static_cast<std::int64_t>(std::max(0.0F, cx - rx - 2.0F));
        const auto x1 = static_cast<std::int64_t>(std::min(w, cx + rx + 2.0F));
        const auto y0 = static_cast<std::int64_t>(std::max(0.0F, cy - ry - 2.0F));
        const auto y1 = static_cast<std::int64_t>(std::min(h, cy + ry + 2.0F));
        const float edge = 2.0F / std::min(rx, ry);
        for (std::int64_t y = y0; y < y1; ++y)
            for (std::int64_t x = x0; x < x1; ++x) {
                const float ux = (static_cast<float>(x) - cx) / rx, uy = (static_cast<float>(y) - cy) / ry;
                const float d = std::sqrt(ux * ux + uy * uy);
                const float cover = std::clamp((1.0F - d) / edge, 0.0F, 1.0F) * alpha;
                if (cover <= 0.0F) continue;
                const auto at = static_cast<std::size_t>(y * size.width + x);
                for (std::size_t c = 0; c < 3; ++c) planes[c][at] += (colour[c] - planes[c][at]) * cover;
            }
    }
}

}  // namespace

RgbImage synthetic_image(ImageSize size, std::uint64_t seed, std::int64_t index) {
    SplitMix64 rng(splitmix64_mix(seed ^ splitmix64_mix(static_cast<std::uint64_t>(index) + 1)));
    const auto pixels = static_cast<std::size_t>(size.width * size.height);
    Planes planes{std::vector<float>(pixels), std::vector<float>(pixels), std::vector<float>(pixels)};
    shade(planes, size, rng);
    const std::int64_t longer = std::max(size.width, size.height);
    add_noise_octave(planes, size, std::max<std::int64_t>(longer / 6, 4), 30.0F, rng);
    add_shapes(planes, size, rng);
    add_noise_octave(planes, size, std::max<std::int64_t>(longer / 40, 3), 14.0F, rng);
    add_noise_octave(planes, size, 3, 10.0F, rng);
    RgbImage image;
    image.reshape(size);
    for (std::size_t p = 0; p < pixels; ++p)
        for (std::size_t c = 0; c < 3; ++c) {
            // Sensor noise: the mean of two uniforms, within +-6.
            const float noise = 6.0F * (rng.next_signed_unit() + rng.next_signed_unit()) * 0.5F;
            image.pixels[p * 3 + c] = static_cast<std::uint8_t>(std::clamp(planes[c][p] + noise + 0.5F, 0.0F, 255.0F));
        }
    return image;
}

}  // namespace inferbench::pipeline
