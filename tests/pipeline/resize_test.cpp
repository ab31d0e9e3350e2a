// The three resize rules' geometry (torchvision's and ultralytics' numbers), the filter's weights, and resize on
// images whose answer is known without a reference: flat colours, identity sizes, the letterbox's fill.
#include "pipeline/resize.hpp"

#include <gtest/gtest.h>

#include <numeric>

#include "pipeline/image_source.hpp"

namespace inferbench::pipeline {
namespace {

PipelineSteps steps_of(ResizeRule rule, ImageSize input, std::int64_t shorter = 0) {
    PipelineSteps steps;
    steps.resize = rule;
    steps.input_size = input;
    steps.resize_shorter = shorter;
    return steps;
}

TEST(ResizeGeometry, ShorterSideThenCentreCropAsTorchvision) {
    // Resize(256) of 500x375: 341x256 (256 * 500 / 375 = 341.33, truncated); CenterCrop(224): left
    // round(58.5) = 58 (half to even), top 16.
    const auto g = resize_geometry({500, 375}, steps_of(ResizeRule::shorter_side_crop, {224, 224}, 256));
    EXPECT_EQ(g.scaled, (ImageSize{341, 256}));
    EXPECT_EQ(g.crop_x, 58);
    EXPECT_EQ(g.crop_y, 16);
    EXPECT_EQ(g.kept, (ImageSize{224, 224}));
    EXPECT_EQ(g.pad_x, 0);
    EXPECT_EQ(g.output, (ImageSize{224, 224}));
    // Portrait, and an offset of 2.5 that rounds to 2.
    const auto portrait = resize_geometry({375, 500}, steps_of(ResizeRule::shorter_side_crop, {224, 224}, 256));
    EXPECT_EQ(portrait.scaled, (ImageSize{256, 341}));
    EXPECT_EQ(portrait.crop_y, 58);
    const auto odd = resize_geometry({229, 300}, steps_of(ResizeRule::shorter_side_crop, {224, 224}, 229));
    EXPECT_EQ(odd.scaled, (ImageSize{229, 300}));
    EXPECT_EQ(odd.crop_x, 2);
    EXPECT_EQ(odd.crop_y, 38);
}

TEST(ResizeGeometry, ShorterSideDefaultsToTheInputsLargerSide) {
    const auto g = resize_geometry({640, 480}, steps_of(ResizeRule::shorter_side_crop, {224, 224}));
    EXPECT_EQ(g.scaled, (ImageSize{298, 224}));
    EXPECT_EQ(g.crop_x, 37);
}

TEST(ResizeGeometry, LetterboxKeepsTheAspectAndCentres) {
    const auto g = resize_geometry({640, 480}, steps_of(ResizeRule::letterbox, {416, 416}));
    EXPECT_EQ(g.scaled, (ImageSize{416, 312}));
    EXPECT_EQ(g.kept, g.scaled);
    EXPECT_EQ(g.pad_x, 0);
    EXPECT_EQ(g.pad_y, 52);
    // An odd padding of 5: 2 left (or top), 3 right (or bottom), as ultralytics' round(dw -+ 0.1).
    const auto odd = resize_geometry({411, 416}, steps_of(ResizeRule::letterbox, {416, 416}));
    EXPECT_EQ(odd.scaled, (ImageSize{411, 416}));
    EXPECT_EQ(odd.pad_x, 2);
    // A thin image keeps at least one row.
    const auto thin = resize_geometry({10000, 3}, steps_of(ResizeRule::letterbox, {640, 640}));
    EXPECT_EQ(thin.scaled, (ImageSize{640, 1}));
}

TEST(ResizeGeometry, PlainScalesToTheInputSize) {
    const auto g = resize_geometry({640, 480}, steps_of(ResizeRule::plain, {300, 300}));
    EXPECT_EQ(g.scaled, (ImageSize{300, 300}));
    EXPECT_EQ(g.kept, (ImageSize{300, 300}));
}

TEST(ResizeGeometry, RefusesEmptySizesAndACropLargerThanTheScaledImage) {
    EXPECT_THROW(resize_geometry({0, 10}, steps_of(ResizeRule::plain, {224, 224})), std::invalid_argument);
    EXPECT_THROW(resize_geometry({10, 10}, steps_of(ResizeRule::plain, {0, 224})), std::invalid_argument);
    EXPECT_THROW(resize_geometry({500, 375}, steps_of(ResizeRule::shorter_side_crop, {224, 224}, 200)),
                 std::invalid_argument);
}

TEST(ResizeWeights, EachOutputsWeightsSumToOneInFixedPoint) {
    for (const auto& [from, to] : {std::pair{640, 224}, std::pair{50, 224}, std::pair{1000, 7}, std::pair{3, 3}}) {
        const ResizeWeights w = resize_weights(from, to, 0, to);
        for (std::int64_t i = 0; i < to; ++i) {
            const auto at = static_cast<std::size_t>(i);
            const auto* k = w.weights.data() + i * w.max_taps;
            const std::int64_t sum = std::accumulate(k, k + w.taps[at], std::int64_t{0});
            EXPECT_NEAR(static_cast<double>(sum), static_cast<double>(1 << kResizeWeightBits), 8.0)
                << from << "->" << to;
            EXPECT_GE(w.start[at], 0);
            EXPECT_LE(w.start[at] + w.taps[at], from);
        }
    }
    // A window's weights are the full axis's weights from its first output on.
    const ResizeWeights all = resize_weights(500, 341, 0, 341);
    const ResizeWeights window = resize_weights(500, 341, 58, 224);
    EXPECT_EQ(window.start.front(), all.start[58]);
    EXPECT_TRUE(std::equal(window.weights.begin(), window.weights.end(), all.weights.begin() + 58 * all.max_taps));
}

TEST(Resize, FlatColourStaysFlatAtEverySizeAndRule) {
    RgbImage flat;
    flat.reshape({97, 61});
    for (std::size_t p = 0; p < flat.pixels.size(); p += 3)
        flat.pixels[p] = 10, flat.pixels[p + 1] = 128, flat.pixels[p + 2] = 250;
    ResizeScratch scratch;
    for (const auto rule : {ResizeRule::plain, ResizeRule::shorter_side_crop}) {
        RgbImage out;
        resize_image(flat, steps_of(rule, {40, 33}), out, scratch);
        ASSERT_EQ(out.size(), (ImageSize{40, 33}));
        for (std::size_t p = 0; p < out.pixels.size(); p += 3) {
            ASSERT_EQ(out.pixels[p], 10);
            ASSERT_EQ(out.pixels[p + 1], 128);
            ASSERT_EQ(out.pixels[p + 2], 250);
        }
    }
}

TEST(Resize, SameSizeIsTheIdentity) {
    const RgbImage image = synthetic_image({53, 31}, 5, 0);
    ResizeScratch scratch;
    RgbImage out;
    resize_image(image, steps_of(ResizeRule::plain, {53, 31}), out, scratch);
    EXPECT_EQ(out.pixels, image.pixels);
}

TEST(Resize, LetterboxFillsOutsideTheImage) {
    RgbImage white;
    white.reshape({200, 100});
    std::fill(white.pixels.begin(), white.pixels.end(), std::uint8_t{255});
    auto steps = steps_of(ResizeRule::letterbox, {64, 64});
    steps.letterbox_fill = 114.0F;
    ResizeScratch scratch;
    RgbImage out;
    resize_image(white, steps, out, scratch);
    ASSERT_EQ(out.size(), (ImageSize{64, 64}));
    const auto g = resize_geometry(white.size(), steps);  // 64x32 at top 16
    ASSERT_EQ(g.pad_y, 16);
    for (std::int64_t y = 0; y < 64; ++y) {
        const bool inside = y >= g.pad_y && y < g.pad_y + g.kept.height;
        EXPECT_EQ(out.pixels[static_cast<std::size_t>(y * 64 * 3 + 5)], inside ? 255 : 114) << "row " << y;
    }
}

TEST(Resize, CropWindowEqualsTheCropOfTheWholeScaledImage) {
    const RgbImage image = synthetic_image({500, 375}, 9, 1);
    ResizeScratch scratch;
    RgbImage cropped;
    resize_image(image, steps_of(ResizeRule::shorter_side_crop, {224, 224}, 256), cropped, scratch);
    RgbImage whole;
    resize_image(image, steps_of(ResizeRule::plain, {341, 256}), whole, scratch);
    for (std::int64_t y = 0; y < 224; ++y)
        for (std::int64_t x = 0; x < 224 * 3; ++x)
            ASSERT_EQ(cropped.pixels[static_cast<std::size_t>(y * 224 * 3 + x)],
                      whole.pixels[static_cast<std::size_t>((y + 16) * 341 * 3 + 58 * 3 + x)]);
}

}  // namespace
}  // namespace inferbench::pipeline
