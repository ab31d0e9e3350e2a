// Image files the pipeline tests make by hand: JPEGs in TurboJPEG's other pixel formats, headers patched to sizes
// no encoder writes, and tiny PNGs of any colour type (stored deflate blocks, CRCs computed here).
#pragma once

#include <turbojpeg.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferbench::pipeline::testing {

inline std::vector<std::uint8_t> encode_with_turbojpeg(const std::uint8_t* pixels, int width, int height,
                                                       int pixel_format, int subsampling) {
    const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitCompress(), &tjDestroy);
    unsigned char* buffer = nullptr;
    unsigned long size = 0;
    if (tjCompress2(handle.get(), pixels, width, 0, height, pixel_format, &buffer, &size, subsampling, 90, 0) != 0)
        throw std::runtime_error(tjGetErrorStr2(handle.get()));
    std::vector<std::uint8_t> bytes(buffer, buffer + size);
    tjFree(buffer);
    return bytes;
}

// Sets the width and height in the frame header (SOF0..SOF2) of a JPEG.
inline void patch_jpeg_size(std::vector<std::uint8_t>& jpeg, std::uint16_t width, std::uint16_t height) {
    for (std::size_t i = 2; i + 9 < jpeg.size(); ++i)
        if (jpeg[i] == 0xFF && jpeg[i + 1] >= 0xC0 && jpeg[i + 1] <= 0xC2) {
            jpeg[i + 5] = static_cast<std::uint8_t>(height >> 8);
            jpeg[i + 6] = static_cast<std::uint8_t>(height & 0xFF);
            jpeg[i + 7] = static_cast<std::uint8_t>(width >> 8);
            jpeg[i + 8] = static_cast<std::uint8_t>(width & 0xFF);
            return;
        }
    throw std::runtime_error("no frame header in the JPEG");
}

inline std::uint32_t crc32_of(const std::uint8_t* data, std::size_t size) {
    std::uint32_t crc = 0xFFFFFFFFU;
    for (std::size_t i = 0; i < size; ++i) {
        crc ^= data[i];
        for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1U)));
    }
    return ~crc;
}

inline void put_be32(std::vector<std::uint8_t>& out, std::size_t at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i)
        out[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (24 - 8 * i));
}

// Sets IHDR's width and height (the first chunk, at byte 16) and its CRC.
inline void patch_png_size(std::vector<std::uint8_t>& png, std::uint32_t width, std::uint32_t height) {
    put_be32(png, 16, width);
    put_be32(png, 20, height);
    put_be32(png, 29, crc32_of(png.data() + 12, 17));
}

inline void append_be32(std::vector<std::uint8_t>& out, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(value >> (24 - 8 * i)));
}

inline void append_chunk(std::vector<std::uint8_t>& png, const char* type, const std::vector<std::uint8_t>& data) {
    append_be32(png, static_cast<std::uint32_t>(data.size()));
    std::vector<std::uint8_t> typed(type, type + 4);
    typed.insert(typed.end(), data.begin(), data.end());
    png.insert(png.end(), typed.begin(), typed.end());
    append_be32(png, crc32_of(typed.data(), typed.size()));
}

// An 8-bit PNG of `color_type` (0 gray, 2 RGB, 4 gray+alpha, 6 RGBA) with these samples, rows unfiltered, in
// one stored (uncompressed) deflate block.
inline std::vector<std::uint8_t> png_of_type(std::uint32_t width, std::uint32_t height, std::uint8_t color_type,
                                             std::initializer_list<std::uint8_t> samples) {
    std::vector<std::uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    std::vector<std::uint8_t> ihdr;
    append_be32(ihdr, width);
    append_be32(ihdr, height);
    ihdr.insert(ihdr.end(), {8, color_type, 0, 0, 0});
    append_chunk(png, "IHDR", ihdr);
    const std::size_t row = samples.size() / height;
    std::vector<std::uint8_t> raw;
    for (std::uint32_t y = 0; y < height; ++y) {
        raw.push_back(0);
        raw.insert(raw.end(), samples.begin() + y * row, samples.begin() + (y + 1) * row);
    }
    std::vector<std::uint8_t> zlib{0x78,
                                   0x01,
                                   0x01,
                                   static_cast<std::uint8_t>(raw.size() & 0xFF),
                                   static_cast<std::uint8_t>(raw.size() >> 8),
                                   static_cast<std::uint8_t>(~raw.size() & 0xFF),
                                   static_cast<std::uint8_t>((~raw.size() >> 8) & 0xFF)};
    zlib.insert(zlib.end(), raw.begin(), raw.end());
    std::uint32_t a = 1, b = 0;
    for (const std::uint8_t v : raw) a = (a + v) % 65521U, b = (b + a) % 65521U;
    append_be32(zlib, (b << 16) | a);
    append_chunk(png, "IDAT", zlib);
    append_chunk(png, "IEND", {});
    return png;
}

}  // namespace inferbench::pipeline::testing
