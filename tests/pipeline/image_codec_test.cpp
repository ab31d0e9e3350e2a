// The codecs on good and bad input: round trips, the header read before any pixel memory, grayscale and CMYK,
// corrupt, truncated, empty and huge images refused with one line naming the file.
#include "pipeline/image_codec.hpp"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <cstring>

#include "pipeline/image_source.hpp"
#include "pipeline/test_images.hpp"

namespace inferbench::pipeline {
namespace {

using testing::patch_jpeg_size;
using testing::patch_png_size;

RgbImage flat(ImageSize size, std::uint8_t r, std::uint8_t g, std::uint8_t b) {
    RgbImage image;
    image.reshape(size);
    for (std::size_t p = 0; p < image.pixels.size(); p += 3) {
        image.pixels[p] = r;
        image.pixels[p + 1] = g;
        image.pixels[p + 2] = b;
    }
    return image;
}

ImageErrorKind kind_of(std::span<const std::uint8_t> bytes, const ImageLimits& limits = {}) {
    try {
        decode_image(bytes, "photo.jpg", limits);
    } catch (const ImageError& error) {
        EXPECT_NE(std::string(error.what()).find("photo.jpg: "), std::string::npos) << error.what();
        EXPECT_EQ(std::string(error.what()).find('\n'), std::string::npos) << error.what();
        return error.kind();
    }
    ADD_FAILURE() << "decoded without an error";
    return ImageErrorKind::unsupported;
}

TEST(ImageCodec, PngRoundTripIsExact) {
    const RgbImage image = synthetic_image({37, 23}, 1, 0);
    const auto bytes = encode_png(image);
    EXPECT_EQ(sniff_image_format(bytes), ImageFormat::png);
    const ImageHeader header = read_image_header(bytes, "a.png");
    EXPECT_EQ(header.size, (ImageSize{37, 23}));
    EXPECT_EQ(header.channels, 3);
    EXPECT_EQ(decode_image(bytes, "a.png").pixels, image.pixels);
}

TEST(ImageCodec, JpegRoundTripOfAFlatColourIsClose) {
    const RgbImage image = flat({48, 32}, 200, 100, 30);
    const auto bytes = encode_jpeg(image, 95);
    EXPECT_EQ(sniff_image_format(bytes), ImageFormat::jpeg);
    const RgbImage decoded = decode_image(bytes, "a.jpg");
    ASSERT_EQ(decoded.size(), image.size());
    for (std::size_t i = 0; i < image.pixels.size(); ++i)
        ASSERT_NEAR(decoded.pixels[i], image.pixels[i], 3) << "value " << i;
}

TEST(ImageCodec, DecodeReusesTheCallersBuffer) {
    const auto bytes = encode_png(flat({16, 16}, 1, 2, 3));
    RgbImage out;
    out.pixels.reserve(4096);
    const auto* before = out.pixels.data();
    decode_image(bytes, "a.png", out);
    EXPECT_EQ(out.pixels.data(), before);
    EXPECT_EQ(out.pixels.size(), 16U * 16U * 3U);
}

TEST(ImageCodec, EncodeRefusesEmptyImagesAndBadQuality) {
    EXPECT_THROW(encode_jpeg(RgbImage{}, 90), std::invalid_argument);
    EXPECT_THROW(encode_png(RgbImage{}), std::invalid_argument);
    EXPECT_THROW(encode_jpeg(flat({2, 2}, 0, 0, 0), 0), std::invalid_argument);
    EXPECT_THROW(encode_jpeg(flat({2, 2}, 0, 0, 0), 101), std::invalid_argument);
}

TEST(ImageCodec, GrayscaleJpegBecomesEqualChannels) {
    std::vector<std::uint8_t> gray(40 * 30);
    for (std::size_t i = 0; i < gray.size(); ++i) gray[i] = static_cast<std::uint8_t>(i % 251);
    const auto bytes = testing::encode_with_turbojpeg(gray.data(), 40, 30, TJPF_GRAY, TJSAMP_GRAY);
    EXPECT_EQ(read_image_header(bytes, "g.jpg").channels, 1);
    const RgbImage decoded = decode_image(bytes, "g.jpg");
    ASSERT_EQ(decoded.size(), (ImageSize{40, 30}));
    for (std::size_t p = 0; p < decoded.pixels.size(); p += 3) {
        ASSERT_EQ(decoded.pixels[p], decoded.pixels[p + 1]);
        ASSERT_EQ(decoded.pixels[p], decoded.pixels[p + 2]);
    }
}

// libjpeg writes CMYK with Adobe's marker, so the stored values are read as inverted (Photoshop's convention):
// stored (c, m, y, k) -> inverted (255 - c, ...) -> R = (255 - C') (255 - K') / 255 = c * k / 255.
TEST(ImageCodec, CmykJpegConvertsByAdobesInvertedRule) {
    const std::uint8_t c = 200, m = 120, y = 40, k = 230;
    std::vector<std::uint8_t> cmyk;
    for (int i = 0; i < 32 * 16; ++i) cmyk.insert(cmyk.end(), {c, m, y, k});
    const auto bytes = testing::encode_with_turbojpeg(cmyk.data(), 32, 16, TJPF_CMYK, TJSAMP_444);
    EXPECT_EQ(read_image_header(bytes, "c.jpg").channels, 4);
    const RgbImage decoded = decode_image(bytes, "c.jpg");
    ASSERT_EQ(decoded.size(), (ImageSize{32, 16}));
    const int expected[3] = {c * k / 255, m * k / 255, y * k / 255};
    for (std::size_t p = 0; p < decoded.pixels.size(); p += 3)
        for (std::size_t ch = 0; ch < 3; ++ch) ASSERT_NEAR(decoded.pixels[p + ch], expected[ch], 3) << ch;
}

TEST(ImageCodec, NotAnImageIsRefusedByItsFirstBytes) {
    const std::string text = "plain text, not a picture";
    const std::span bytes(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
    EXPECT_FALSE(sniff_image_format(bytes).has_value());
    EXPECT_EQ(kind_of(bytes), ImageErrorKind::not_an_image);
    EXPECT_EQ(kind_of({}), ImageErrorKind::not_an_image);
}

TEST(ImageCodec, TruncatedFilesAreCorrupt) {
    const RgbImage image = synthetic_image({64, 48}, 2, 0);
    for (const auto& bytes : {encode_jpeg(image, 90), encode_png(image)}) {
        for (const std::size_t keep : {bytes.size() / 2, bytes.size() - 2, std::size_t{12}}) {
            SCOPED_TRACE(keep);
            const std::span<const std::uint8_t> cut(bytes.data(), keep);
            EXPECT_EQ(kind_of(cut), ImageErrorKind::corrupt);
        }
    }
}

TEST(ImageCodec, CorruptDataIsRefused) {
    auto jpeg = encode_jpeg(synthetic_image({64, 48}, 3, 0), 90);
    std::fill(jpeg.begin() + 20, jpeg.begin() + 60, std::uint8_t{0x55});  // the tables overwritten
    EXPECT_EQ(kind_of(jpeg), ImageErrorKind::corrupt);
    auto png = encode_png(synthetic_image({64, 48}, 3, 0));
    png[png.size() / 2] ^= 0xFF;  // a compressed byte: the CRC or inflate fails
    EXPECT_EQ(kind_of(png), ImageErrorKind::corrupt);
}

TEST(ImageCodec, HugeHeadersAreRefusedBeforeAnyAllocation) {
    auto jpeg = encode_jpeg(flat({16, 16}, 9, 9, 9), 90);
    patch_jpeg_size(jpeg, 30000, 30000);
    auto png = encode_png(flat({16, 16}, 9, 9, 9));
    patch_png_size(png, 30000, 30000);
    for (const auto* bytes : {&jpeg, &png}) {
        try {
            read_image_header(*bytes, "huge");
            ADD_FAILURE() << "the header was accepted";
        } catch (const ImageError& error) {
            EXPECT_EQ(error.kind(), ImageErrorKind::too_large);
            EXPECT_NE(std::string(error.what()).find("30000x30000"), std::string::npos) << error.what();
        }
        EXPECT_EQ(kind_of(*bytes), ImageErrorKind::too_large);
    }
    // Within the side limit but above the pixel limit: the stated pixel limit refuses it.
    ImageLimits small{.max_side = kMaxImageSide, .max_pixels = 100};
    EXPECT_EQ(kind_of(encode_png(flat({11, 10}, 1, 1, 1)), small), ImageErrorKind::too_large);
}

TEST(ImageCodec, ZeroByZeroImagesAreRefused) {
    auto jpeg = encode_jpeg(flat({16, 16}, 9, 9, 9), 90);
    patch_jpeg_size(jpeg, 0, 0);
    const ImageErrorKind jpeg_kind = kind_of(jpeg);
    EXPECT_TRUE(jpeg_kind == ImageErrorKind::empty || jpeg_kind == ImageErrorKind::corrupt) << to_string(jpeg_kind);
    auto png = encode_png(flat({16, 16}, 9, 9, 9));
    patch_png_size(png, 0, 0);
    const ImageErrorKind png_kind = kind_of(png);
    EXPECT_TRUE(png_kind == ImageErrorKind::empty || png_kind == ImageErrorKind::corrupt) << to_string(png_kind);
    EXPECT_THROW(check_image_size({0, 0}, "x", {}), ImageError);
}

TEST(ImageCodec, PngWithAlphaGrayAndPaletteBecomesRgb) {
    // Gray+alpha 2x1 and a palette PNG, byte by byte from testing's writer.
    const auto gray_alpha = testing::png_of_type(2, 1, 4 /* gray+alpha */, {10, 255, 200, 0});
    EXPECT_EQ(decode_image(gray_alpha, "ga.png").pixels, (std::vector<std::uint8_t>{10, 10, 10, 200, 200, 200}));
    const auto rgba = testing::png_of_type(1, 1, 6 /* RGBA */, {1, 2, 3, 4});
    EXPECT_EQ(decode_image(rgba, "rgba.png").pixels, (std::vector<std::uint8_t>{1, 2, 3}));
}

}  // namespace
}  // namespace inferbench::pipeline

namespace inferbench::pipeline {
namespace {

// TurboJPEG keeps a decompressor that stopped mid-header in that state: the next file on the same thread must
// still be read from its own start.
TEST(ImageCodec, AGoodFileDecodesAfterAFailureOnTheSameThread) {
    const auto good = encode_jpeg(synthetic_image({24, 16}, 4, 0), 90);
    const std::span<const std::uint8_t> cut(good.data(), 12);
    EXPECT_THROW(decode_image(cut, "cut.jpg"), ImageError);
    EXPECT_EQ(read_image_header(good, "good.jpg").size, (ImageSize{24, 16}));
    EXPECT_EQ(decode_image(good, "good.jpg").size(), (ImageSize{24, 16}));
}

}  // namespace
}  // namespace inferbench::pipeline
