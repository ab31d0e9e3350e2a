// PNG through libpng (image_codec's PNG half): libpng reports errors by longjmp, so its calls stay inside two
// small functions with no C++ objects of their own, and the pixel buffer is sized between them.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "pipeline/image_codec.hpp"

namespace inferbench::pipeline {

struct PngInfo {
    ImageSize size;
    int channels = 0;
};

// Throws ImageError (corrupt) naming the image.
PngInfo read_png_info(std::span<const std::uint8_t> bytes, std::string_view name);
void decode_png(std::span<const std::uint8_t> bytes, std::string_view name, RgbImage& out, const ImageLimits& limits);

}  // namespace inferbench::pipeline
