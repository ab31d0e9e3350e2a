// Image files to pixels and back: JPEG through libjpeg-turbo's TurboJPEG API, PNG through libpng. Every decoded
// image is 8-bit RGB, rows top to bottom, channels interleaved (HWC). The header is read and the limits checked
// before any pixel memory is allocated, so a hostile header costs nothing.
//
// Conversion rules (the same as Pillow's Image.convert("RGB")):
//  * grayscale (JPEG or PNG): the gray value copied to R, G and B;
//  * CMYK and YCCK JPEG: Adobe's inverted CMYK (an APP14 "Adobe" marker, as Photoshop and Pillow write it) is
//    inverted back first; then R = (255 - C) * (255 - K) / 255, rounded, likewise G from M and B from Y;
//  * PNG: a palette expanded, 16-bit samples cut to their high byte, alpha dropped (not composited);
//  * EXIF orientation is not applied (neither Pillow's Image.open nor torchvision's decoders apply it).
// A JPEG warning (a truncated file's "Premature end of JPEG file", extraneous bytes) is an error: the image is
// counted as corrupt rather than decoded with made-up pixels.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/pipeline.hpp"

namespace inferbench::pipeline {

// 8-bit RGB pixels, HWC, width * height * 3 bytes.
struct RgbImage {
    std::int64_t width = 0;
    std::int64_t height = 0;
    std::vector<std::uint8_t> pixels;

    ImageSize size() const { return {width, height}; }
    // Sets the size and resizes `pixels` (keeping its capacity for the next image).
    void reshape(ImageSize size);
};

// The most pixels one image may have (64 Mi: 8192 x 8192, 192 MiB of RGB) besides each side's kMaxImageSide.
inline constexpr std::int64_t kMaxImagePixels = std::int64_t{1} << 26;
struct ImageLimits {
    std::int64_t max_side = kMaxImageSide;
    std::int64_t max_pixels = kMaxImagePixels;
};

// Why an image was refused. The caller counts them per kind and goes on with the next image.
enum class ImageErrorKind {
    not_an_image,  // neither JPEG nor PNG by its first bytes
    corrupt,       // a JPEG or PNG whose data cannot be decoded (truncated included)
    empty,         // a width or height of 0
    too_large,     // a side above the limit, or more pixels than the limit
    unsupported,   // a valid file this decoder does not take (e.g. a JPEG colour space other than these)
};
std::string_view to_string(ImageErrorKind kind);

// One line: the image's name, what is wrong, and (where there is one) what to do.
class ImageError : public std::runtime_error {
public:
    ImageError(ImageErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ImageErrorKind kind() const { return kind_; }

private:
    ImageErrorKind kind_;
};

// Throws ImageError (empty or too_large, naming the image) for a size the limits refuse.
void check_image_size(ImageSize size, std::string_view name, const ImageLimits& limits);

// The format by the file's first bytes (the JPEG SOI marker, the PNG signature); nothing for anything else.
std::optional<ImageFormat> sniff_image_format(std::span<const std::uint8_t> bytes);

struct ImageHeader {
    ImageFormat format = ImageFormat::jpeg;
    ImageSize size;
    int channels = 0;  // as stored: 1 gray, 2 gray+alpha, 3 colour, 4 CMYK or RGBA
};

// The header only, checked against the limits. `name` (a file name) starts every error's message.
// Throws ImageError.
ImageHeader read_image_header(std::span<const std::uint8_t> bytes, std::string_view name,
                              const ImageLimits& limits = {});

// Decodes into `out` (reshaped; its buffer reused when large enough). Throws ImageError; `out` is then
// unspecified. Safe to call from several threads at once, each with its own `out`.
void decode_image(std::span<const std::uint8_t> bytes, std::string_view name, RgbImage& out,
                  const ImageLimits& limits = {});
RgbImage decode_image(std::span<const std::uint8_t> bytes, std::string_view name, const ImageLimits& limits = {});

// Encodes with the real encoders (4:2:0 chroma subsampling for JPEG, as cameras and Pillow's default write).
// quality 1..100. Throws std::invalid_argument for an empty image or a quality outside 1..100.
std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, int quality);
std::vector<std::uint8_t> encode_png(const RgbImage& image);
std::vector<std::uint8_t> encode_image(const RgbImage& image, ImageFormat format, int jpeg_quality);

}  // namespace inferbench::pipeline
