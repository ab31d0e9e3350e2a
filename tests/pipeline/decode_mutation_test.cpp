// A deterministic stand-in for the fuzzers that runs on every machine: valid JPEGs and PNGs (colour, grayscale,
// CMYK, progressive-free baseline, alpha) mutated by a seeded generator (bytes flipped, set, cut, duplicated,
// headers' sizes changed) and decoded. Each must decode or throw ImageError, never crash or throw anything else,
// and never produce an image above the limits.
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include "core/splitmix64.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/test_images.hpp"

namespace inferbench::pipeline {
namespace {

std::vector<std::vector<std::uint8_t>> seeds() {
    const RgbImage colour = synthetic_image({33, 21}, 21, 0);
    std::vector<std::uint8_t> gray(33 * 21);
    for (std::size_t i = 0; i < gray.size(); ++i) gray[i] = colour.pixels[i * 3];
    std::vector<std::uint8_t> cmyk(33 * 21 * 4);
    for (std::size_t i = 0; i < cmyk.size(); ++i) cmyk[i] = colour.pixels[i % colour.pixels.size()];
    return {encode_jpeg(colour, 90),
            encode_jpeg(colour, 30),
            encode_png(colour),
            testing::encode_with_turbojpeg(gray.data(), 33, 21, TJPF_GRAY, TJSAMP_GRAY),
            testing::encode_with_turbojpeg(cmyk.data(), 33, 21, TJPF_CMYK, TJSAMP_420),
            testing::png_of_type(2, 2, 6, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})};
}

std::vector<std::uint8_t> mutate(std::vector<std::uint8_t> bytes, SplitMix64& rng) {
    const int edits = 1 + static_cast<int>(rng.next() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
        const std::size_t at = rng.next() % bytes.size();
        switch (rng.next() % 6) {
            case 0:
                bytes[at] ^= static_cast<std::uint8_t>(1U << (rng.next() % 8));
                break;
            case 1:
                bytes[at] = static_cast<std::uint8_t>(rng.next());
                break;
            case 2:
                bytes.resize(at + 1);
                break;
            case 3: {
                const std::size_t length = std::min<std::size_t>(rng.next() % 64, bytes.size() - at);
                bytes.insert(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                             bytes.begin() + static_cast<std::ptrdiff_t>(at),
                             bytes.begin() + static_cast<std::ptrdiff_t>(at + length));
                break;
            }
            case 4:
                bytes[at] = 0xFF;
                break;
            default:
                bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(at));
                break;
        }
    }
    return bytes;
}

TEST(DecodeMutation, MutatedImagesDecodeOrThrowImageErrorOnly) {
    const ImageLimits limits{.max_side = 4096, .max_pixels = 1 << 20};
    SplitMix64 rng(0xDEC0DEULL);
    std::size_t decoded = 0, refused = 0;
    RgbImage out;
    for (const auto& seed : seeds()) {
        for (int round = 0; round < 600; ++round) {
            const auto bytes = mutate(seed, rng);
            try {
                decode_image(bytes, "mutant", out, limits);
                ASSERT_GT(out.width, 0);
                ASSERT_LE(out.width * out.height, limits.max_pixels);
                ASSERT_EQ(out.pixels.size(), static_cast<std::size_t>(out.width * out.height * 3));
                ++decoded;
            } catch (const ImageError& error) {
                ASSERT_EQ(std::string(error.what()).rfind("mutant: ", 0), 0U) << error.what();
                ++refused;
            }
        }
    }
    // Both outcomes occur: the mutations reach past the first bytes.
    EXPECT_GT(decoded, 0U);
    EXPECT_GT(refused, 0U);
}

}  // namespace
}  // namespace inferbench::pipeline
