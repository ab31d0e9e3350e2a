#include "pipeline/image_codec.hpp"

#include <turbojpeg.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>

#include "pipeline/png_codec.hpp"

namespace inferbench::pipeline {
namespace {

constexpr std::array<std::uint8_t, 3> kJpegMagic{0xFF, 0xD8, 0xFF};
constexpr std::array<std::uint8_t, 8> kPngMagic{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};

struct TjHandleCloser {
    void operator()(void* handle) const { tjDestroy(handle); }
};
using TjHandle = std::unique_ptr<void, TjHandleCloser>;

// One decompressor per thread, made on first use: a handle may not be shared between threads. After a failure
// the handle is made anew: TurboJPEG leaves a decompressor that stopped mid-header in that state, and the next
// file's header would be read as the rest of the last one.
thread_local TjHandle tl_decompressor;

tjhandle thread_decompressor() {
    if (!tl_decompressor) tl_decompressor.reset(tjInitDecompress());
    if (!tl_decompressor) throw std::runtime_error("TurboJPEG could not make a decompressor (out of memory)");
    return tl_decompressor.get();
}

tjhandle thread_compressor() {
    thread_local TjHandle handle{tjInitCompress()};
    if (!handle) throw std::runtime_error("TurboJPEG could not make a compressor (out of memory)");
    return handle.get();
}

[[noreturn]] void fail(ImageErrorKind kind, std::string_view name, std::string_view what) {
    tl_decompressor.reset();
    throw ImageError(kind, fmt::format("{}: {}", name, what));
}

const unsigned char* data_of(std::span<const std::uint8_t> bytes) { return bytes.data(); }

unsigned long length_of(std::span<const std::uint8_t> bytes) { return static_cast<unsigned long>(bytes.size()); }

// Photoshop writes CMYK inverted and says so with an APP14 "Adobe" marker; Pillow reads such files inverted. The
// markers before the first scan are walked by their lengths.
bool has_adobe_marker(std::span<const std::uint8_t> bytes) {
    std::size_t at = 2;
    while (at + 4 <= bytes.size() && bytes[at] == 0xFF) {
        const std::uint8_t marker = bytes[at + 1];
        if (marker == 0xDA || marker == 0xD9) return false;  // start of scan, end of image
        const std::size_t length = (std::size_t{bytes[at + 2]} << 8) | bytes[at + 3];
        if (marker == 0xEE && length >= 7 && at + 9 <= bytes.size() &&
            std::memcmp(bytes.data() + at + 4, "Adobe", 5) == 0)
            return true;
        at += 2 + length;
    }
    return false;
}

std::uint8_t div255_rounded(int value) { return static_cast<std::uint8_t>((value + 127) / 255); }

// CMYK (inverted back where Adobe's marker says so) to RGB in place: 4 bytes a pixel in, 3 out, front to back.
void cmyk_to_rgb(std::uint8_t* pixels, std::int64_t count, bool inverted) {
    for (std::int64_t i = 0; i < count; ++i) {
        const std::uint8_t* in = pixels + i * 4;
        int c = in[0], m = in[1], y = in[2], k = in[3];
        if (inverted) c = 255 - c, m = 255 - m, y = 255 - y, k = 255 - k;
        std::uint8_t* out = pixels + i * 3;
        out[0] = div255_rounded((255 - c) * (255 - k));
        out[1] = div255_rounded((255 - m) * (255 - k));
        out[2] = div255_rounded((255 - y) * (255 - k));
    }
}

struct JpegHeader {
    ImageSize size;
    int colorspace = 0;
};

JpegHeader read_jpeg_header(tjhandle handle, std::span<const std::uint8_t> bytes, std::string_view name) {
    int width = 0, height = 0, subsampling = 0, colorspace = 0;
    if (tjDecompressHeader3(handle, data_of(bytes), length_of(bytes), &width, &height, &subsampling, &colorspace) != 0)
        fail(ImageErrorKind::corrupt, name, fmt::format("not a readable JPEG header ({})", tjGetErrorStr2(handle)));
    // TurboJPEG answers 0x0 when the data ends before the frame header.
    if (width <= 0 || height <= 0) fail(ImageErrorKind::corrupt, name, "truncated JPEG: the data ends before its size");
    return {{width, height}, colorspace};
}

int jpeg_channels(int colorspace) {
    return colorspace == TJCS_GRAY ? 1 : (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK) ? 4 : 3;
}

void decode_jpeg(std::span<const std::uint8_t> bytes, std::string_view name, RgbImage& out, const ImageLimits& limits) {
    tjhandle handle = thread_decompressor();
    const JpegHeader header = read_jpeg_header(handle, bytes, name);
    check_image_size(header.size, name, limits);
    const bool cmyk = header.colorspace == TJCS_CMYK || header.colorspace == TJCS_YCCK;
    out.reshape(header.size);
    // CMYK is decoded 4 bytes a pixel into a buffer of that size, then converted in place.
    if (cmyk) out.pixels.resize(static_cast<std::size_t>(header.size.width * header.size.height * 4));
    const int width = static_cast<int>(header.size.width);
    const int height = static_cast<int>(header.size.height);
    const int format = cmyk ? TJPF_CMYK : TJPF_RGB;
    // A warning (a truncated file's "Premature end of JPEG file") is an error: its pixels would be made up.
    const int flags = TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS;
    if (tjDecompress2(handle, data_of(bytes), length_of(bytes), out.pixels.data(), width, 0, height, format, flags) !=
        0)
        fail(ImageErrorKind::corrupt, name, fmt::format("corrupt or truncated JPEG data ({})", tjGetErrorStr2(handle)));
    if (cmyk) {
        cmyk_to_rgb(out.pixels.data(), header.size.width * header.size.height, has_adobe_marker(bytes));
        out.pixels.resize(static_cast<std::size_t>(header.size.width * header.size.height * 3));
    }
}

}  // namespace

void RgbImage::reshape(ImageSize size) {
    width = size.width;
    height = size.height;
    pixels.resize(static_cast<std::size_t>(size.width * size.height * 3));
}

std::string_view to_string(ImageErrorKind kind) {
    switch (kind) {
        case ImageErrorKind::not_an_image:
            return "not an image";
        case ImageErrorKind::corrupt:
            return "corrupt";
        case ImageErrorKind::empty:
            return "empty";
        case ImageErrorKind::too_large:
            return "too large";
        case ImageErrorKind::unsupported:
            return "unsupported";
    }
    return "unknown";
}

void check_image_size(ImageSize size, std::string_view name, const ImageLimits& limits) {
    if (size.width <= 0 || size.height <= 0)
        fail(ImageErrorKind::empty, name, fmt::format("the image is {}x{}: it has no pixels", size.width, size.height));
    if (size.width > limits.max_side || size.height > limits.max_side)
        fail(ImageErrorKind::too_large, name,
             fmt::format("the image is {}x{}, a side above the limit of {}: scale it down", size.width, size.height,
                         limits.max_side));
    if (size.width * size.height > limits.max_pixels)
        fail(ImageErrorKind::too_large, name,
             fmt::format("the image is {}x{}, {} pixels, above the limit of {}: scale it down", size.width, size.height,
                         size.width * size.height, limits.max_pixels));
}

std::optional<ImageFormat> sniff_image_format(std::span<const std::uint8_t> bytes) {
    if (bytes.size() >= kJpegMagic.size() && std::equal(kJpegMagic.begin(), kJpegMagic.end(), bytes.begin()))
        return ImageFormat::jpeg;
    if (bytes.size() >= kPngMagic.size() && std::equal(kPngMagic.begin(), kPngMagic.end(), bytes.begin()))
        return ImageFormat::png;
    return std::nullopt;
}

ImageHeader read_image_header(std::span<const std::uint8_t> bytes, std::string_view name, const ImageLimits& limits) {
    const auto format = sniff_image_format(bytes);
    if (!format) fail(ImageErrorKind::not_an_image, name, "not a JPEG or PNG file (by its first bytes)");
    ImageHeader header;
    header.format = *format;
    if (*format == ImageFormat::jpeg) {
        const JpegHeader jpeg = read_jpeg_header(thread_decompressor(), bytes, name);
        header.size = jpeg.size;
        header.channels = jpeg_channels(jpeg.colorspace);
    } else {
        const PngInfo png = read_png_info(bytes, name);
        header.size = png.size;
        header.channels = png.channels;
    }
    check_image_size(header.size, name, limits);
    return header;
}

void decode_image(std::span<const std::uint8_t> bytes, std::string_view name, RgbImage& out,
                  const ImageLimits& limits) {
    const auto format = sniff_image_format(bytes);
    if (!format) fail(ImageErrorKind::not_an_image, name, "not a JPEG or PNG file (by its first bytes)");
    if (*format == ImageFormat::jpeg)
        decode_jpeg(bytes, name, out, limits);
    else
        decode_png(bytes, name, out, limits);
}

RgbImage decode_image(std::span<const std::uint8_t> bytes, std::string_view name, const ImageLimits& limits) {
    RgbImage image;
    decode_image(bytes, name, image, limits);
    return image;
}

std::vector<std::uint8_t> encode_jpeg(const RgbImage& image, int quality) {
    if (image.width <= 0 || image.height <= 0) throw std::invalid_argument("cannot encode an empty image");
    if (quality < 1 || quality > 100)
        throw std::invalid_argument(fmt::format("JPEG quality {} is outside 1..100", quality));
    if (image.width > std::numeric_limits<int>::max() / 3 || image.height > std::numeric_limits<int>::max())
        throw std::invalid_argument("image too large to encode");
    tjhandle handle = thread_compressor();
    unsigned char* buffer = nullptr;
    unsigned long size = 0;
    const int rc = tjCompress2(handle, image.pixels.data(), static_cast<int>(image.width), 0,
                               static_cast<int>(image.height), TJPF_RGB, &buffer, &size, TJSAMP_420, quality, 0);
    const std::unique_ptr<unsigned char, decltype(&tjFree)> owned(buffer, &tjFree);
    if (rc != 0) throw std::runtime_error(fmt::format("JPEG encoding failed: {}", tjGetErrorStr2(handle)));
    return {buffer, buffer + size};
}

std::vector<std::uint8_t> encode_image(const RgbImage& image, ImageFormat format, int jpeg_quality) {
    return format == ImageFormat::jpeg ? encode_jpeg(image, jpeg_quality) : encode_png(image);
}

}  // namespace inferbench::pipeline
