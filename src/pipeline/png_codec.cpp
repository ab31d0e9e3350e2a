#include "pipeline/png_codec.hpp"

#include <png.h>

#include <csetjmp>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench::pipeline {
namespace {

// What the callbacks see: the bytes, the read position and libpng's last error text.
struct PngSource {
    const std::uint8_t* data = nullptr;
    std::size_t size = 0;
    std::size_t at = 0;
    char error[200] = {};
};

extern "C" void png_on_error(png_structp png, png_const_charp message) {
    auto* source = static_cast<PngSource*>(png_get_error_ptr(png));
    std::snprintf(source->error, sizeof source->error, "%s", message);
    png_longjmp(png, 1);
}

extern "C" void png_on_warning(png_structp, png_const_charp) {}

extern "C" void png_on_read(png_structp png, png_bytep into, png_size_t length) {
    auto* source = static_cast<PngSource*>(png_get_io_ptr(png));
    if (length > source->size - source->at) png_error(png, "truncated PNG data");
    std::memcpy(into, source->data + source->at, length);
    source->at += length;
}

// The read structs, destroyed together whatever happened.
class PngReader {
public:
    explicit PngReader(PngSource& source) {
        png_ = png_create_read_struct(PNG_LIBPNG_VER_STRING, &source, png_on_error, png_on_warning);
        if (png_ != nullptr) info_ = png_create_info_struct(png_);
        if (png_ == nullptr || info_ == nullptr) throw std::runtime_error("libpng could not start (out of memory)");
        png_set_read_fn(png_, &source, png_on_read);
        // libpng's own bound on chunks held in memory (text, unknown chunks), besides our pixel limits.
        png_set_chunk_malloc_max(png_, 8U << 20);
    }
    PngReader(const PngReader&) = delete;
    PngReader& operator=(const PngReader&) = delete;
    ~PngReader() { png_destroy_read_struct(&png_, &info_, nullptr); }
    png_structp png() const { return png_; }
    png_infop info() const { return info_; }

private:
    png_structp png_ = nullptr;
    png_infop info_ = nullptr;
};

// Reads the header and sets the transforms to 8-bit RGB. 0 on success; libpng's errors land here by longjmp,
// so this function holds nothing that needs destroying.
int png_read_header(png_structp png, png_infop info, png_uint_32* width, png_uint_32* height, int* channels) {
    if (setjmp(png_jmpbuf(png))) return 1;
    png_read_info(png, info);
    *width = png_get_image_width(png, info);
    *height = png_get_image_height(png, info);
    *channels = png_get_channels(png, info);
    return 0;
}

void png_set_rgb8(png_structp png, png_infop info) {
    const int color = png_get_color_type(png, info);
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && png_get_bit_depth(png, info) < 8) png_set_expand_gray_1_2_4_to_8(png);
    png_set_strip_16(png);
    png_set_strip_alpha(png);
    if (color == PNG_COLOR_TYPE_GRAY || color == PNG_COLOR_TYPE_GRAY_ALPHA) png_set_gray_to_rgb(png);
    png_set_interlace_handling(png);
}

int png_read_pixels(png_structp png, png_infop info, png_bytep* rows, png_uint_32 height) {
    if (setjmp(png_jmpbuf(png))) return 1;
    png_set_rgb8(png, info);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != png_get_image_width(png, info) * 3) png_error(png, "unexpected row size");
    (void)height;
    png_read_image(png, rows);
    png_read_end(png, nullptr);
    return 0;
}

[[noreturn]] void fail_corrupt(std::string_view name, const PngSource& source) {
    throw ImageError(ImageErrorKind::corrupt, fmt::format("{}: corrupt or truncated PNG ({})", name, source.error));
}

}  // namespace

PngInfo read_png_info(std::span<const std::uint8_t> bytes, std::string_view name) {
    PngSource source{bytes.data(), bytes.size()};
    PngReader reader(source);
    png_uint_32 width = 0, height = 0;
    int channels = 0;
    if (png_read_header(reader.png(), reader.info(), &width, &height, &channels) != 0) fail_corrupt(name, source);
    return {{width, height}, channels};
}

void decode_png(std::span<const std::uint8_t> bytes, std::string_view name, RgbImage& out, const ImageLimits& limits) {
    PngSource source{bytes.data(), bytes.size()};
    PngReader reader(source);
    png_uint_32 width = 0, height = 0;
    int channels = 0;
    if (png_read_header(reader.png(), reader.info(), &width, &height, &channels) != 0) fail_corrupt(name, source);
    check_image_size({width, height}, name, limits);
    out.reshape({width, height});
    std::vector<png_bytep> rows(height);
    for (png_uint_32 y = 0; y < height; ++y) rows[y] = out.pixels.data() + std::size_t{y} * width * 3;
    if (png_read_pixels(reader.png(), reader.info(), rows.data(), height) != 0) fail_corrupt(name, source);
}

// Writing: libpng's error path longjmps here too; the image is written row by row into a growing buffer.
namespace {

struct PngSink {
    std::vector<std::uint8_t>* bytes = nullptr;
    char error[200] = {};
};

extern "C" void png_on_write_error(png_structp png, png_const_charp message) {
    auto* sink = static_cast<PngSink*>(png_get_error_ptr(png));
    std::snprintf(sink->error, sizeof sink->error, "%s", message);
    png_longjmp(png, 1);
}

extern "C" void png_on_write(png_structp png, png_bytep data, png_size_t length) {
    auto* sink = static_cast<PngSink*>(png_get_io_ptr(png));
    sink->bytes->insert(sink->bytes->end(), data, data + length);
}

extern "C" void png_on_flush(png_structp) {}

int png_write_all(png_structp png, png_infop info, png_uint_32 width, png_uint_32 height, png_bytep* rows) {
    if (setjmp(png_jmpbuf(png))) return 1;
    png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    png_write_image(png, rows);
    png_write_end(png, nullptr);
    return 0;
}

}  // namespace

std::vector<std::uint8_t> encode_png(const RgbImage& image) {
    if (image.width <= 0 || image.height <= 0) throw std::invalid_argument("cannot encode an empty image");
    std::vector<std::uint8_t> bytes;
    PngSink sink{&bytes};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, png_on_write_error, png_on_warning);
    png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
    if (png == nullptr || info == nullptr) {
        png_destroy_write_struct(&png, &info);
        throw std::runtime_error("libpng could not start (out of memory)");
    }
    png_set_write_fn(png, &sink, png_on_write, png_on_flush);
    std::vector<png_bytep> rows(static_cast<std::size_t>(image.height));
    for (std::size_t y = 0; y < rows.size(); ++y)
        rows[y] = const_cast<png_bytep>(image.pixels.data() + y * static_cast<std::size_t>(image.width) * 3);
    const int rc = png_write_all(png, info, static_cast<png_uint_32>(image.width),
                                 static_cast<png_uint_32>(image.height), rows.data());
    png_destroy_write_struct(&png, &info);
    if (rc != 0) throw std::runtime_error(fmt::format("PNG encoding failed: {}", sink.error));
    return bytes;
}

}  // namespace inferbench::pipeline
