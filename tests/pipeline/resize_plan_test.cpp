// The resize geometry and filter taps the CPU resize and the GPU kernels share, and the per-pixel arithmetic
// (resample_math.hpp) the kernels compile: checked here on the host, where no GPU is needed.
#include "pipeline/resize_plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/error.hpp"

namespace inferbench::pipeline {
namespace {

PipelineSteps imagenet_steps() {
    PipelineSteps steps;
    steps.resize = ResizeRule::shorter_side_crop;
    steps.input_size = {224, 224};
    steps.resize_shorter = 256;
    return steps;
}

TEST(ResizePlan, ShorterSideThenCentreCropAsTorchvision) {
    // 640x480: the shorter side to 256, the longer int(256 * 640 / 480) = 341; the crop's left round(58.5) = 58
    // (Python rounds halves to even), its top round(16) = 16.
    const auto p = place_image(imagenet_steps(), {640, 480});
    EXPECT_EQ(p.x, (AxisPlacement{640, 341, 58, 0, 224}));
    EXPECT_EQ(p.y, (AxisPlacement{480, 256, 16, 0, 224}));
    const auto tall = place_image(imagenet_steps(), {375, 500});
    EXPECT_EQ(tall.x, (AxisPlacement{375, 256, 16, 0, 224}));
    EXPECT_EQ(tall.y.scaled, 341);
}

TEST(ResizePlan, LetterboxCentresTheScaledImageAsUltralytics) {
    PipelineSteps steps;
    steps.resize = ResizeRule::letterbox;
    steps.input_size = {640, 640};
    const auto p = place_image(steps, {1280, 720});  // ratio 0.5: 640x360, padding 140 above (round(139.9))
    EXPECT_EQ(p.x, (AxisPlacement{1280, 640, 0, 0, 640}));
    EXPECT_EQ(p.y, (AxisPlacement{720, 360, 0, 140, 360}));
    const auto odd = place_image(steps, {640, 481});  // ratio 1: 640x481, padding 79.5 above: round(79.4) = 79
    EXPECT_EQ(odd.y.placed_begin, 79);
}

TEST(ResizePlan, PlainScalesEachAxisToTheInput) {
    PipelineSteps steps;
    steps.input_size = {300, 300};
    const auto p = place_image(steps, {640, 480});
    EXPECT_EQ(p.x, (AxisPlacement{640, 300, 0, 0, 300}));
    EXPECT_EQ(p.y, (AxisPlacement{480, 300, 0, 0, 300}));
}

TEST(ResizePlan, RefusesEmptyImagesAndCropsLargerThanTheScaledImage) {
    EXPECT_THROW(place_image(imagenet_steps(), {0, 10}), UserError);
    auto steps = imagenet_steps();
    steps.resize_shorter = 200;
    EXPECT_THROW(place_image(steps, {640, 480}), UserError);
}

TEST(ResizePlan, DownscaleTapsArePillowsWidenedTriangle) {
    // 4 -> 2: scale 2, support 2; output 0's centre 1.0 covers sources 0..2 with 0.75, 0.75, 0.25 before
    // normalising: 3/7, 3/7, 1/7.
    const auto taps = axis_taps({4, 2, 0, 0, 2});
    ASSERT_EQ(taps.taps.size(), 2U);
    EXPECT_EQ(taps.taps[0].first, 0);
    ASSERT_EQ(taps.taps[0].count, 3);
    EXPECT_FLOAT_EQ(taps.weights[0], 3.0F / 7.0F);
    EXPECT_FLOAT_EQ(taps.weights[1], 3.0F / 7.0F);
    EXPECT_FLOAT_EQ(taps.weights[2], 1.0F / 7.0F);
    EXPECT_EQ(taps.taps[1].first, 1);
    EXPECT_EQ(taps.taps[1].count, 3);
}

TEST(ResizePlan, EveryOutputsWeightsSumToOne) {
    for (const AxisPlacement axis : {AxisPlacement{1920, 224, 0, 0, 224}, AxisPlacement{100, 640, 0, 0, 640},
                                     AxisPlacement{640, 341, 58, 0, 224}}) {
        const auto taps = axis_taps(axis);
        ASSERT_EQ(taps.taps.size(), static_cast<std::size_t>(axis.placed_count));
        for (const auto& t : taps.taps) {
            ASSERT_GT(t.count, 0);
            EXPECT_GE(t.first, 0);
            EXPECT_LE(t.first + t.count, axis.source);
            const float sum = std::accumulate(taps.weights.begin() + t.weight_offset,
                                              taps.weights.begin() + t.weight_offset + t.count, 0.0F);
            EXPECT_NEAR(sum, 1.0F, 1e-5F);
        }
    }
}

TEST(ResizePlan, SameSizeResizeKeepsEveryPixelAndAFlatImageStaysFlat) {
    PipelineSteps steps;
    steps.input_size = {7, 5};
    std::vector<std::uint8_t> image(7 * 5 * 3);
    for (std::size_t i = 0; i < image.size(); ++i) image[i] = static_cast<std::uint8_t>(i * 37 % 256);
    const auto same = make_resize_plan(steps, {7, 5});
    EXPECT_EQ(resample_rgb8(same, image.data()), image);

    std::vector<std::uint8_t> flat(97 * 61 * 3, 200);
    steps.input_size = {13, 29};
    const auto plan = make_resize_plan(steps, {97, 61});
    for (const auto value : resample_rgb8(plan, flat.data())) ASSERT_EQ(value, 200);
}

TEST(ResizePlan, RowsOfTheHorizontalPassCoverEveryVerticalTap) {
    const auto plan = make_resize_plan(imagenet_steps(), {640, 480});
    for (const auto& t : plan.y.taps) {
        EXPECT_GE(t.first, plan.first_row);
        EXPECT_LE(t.first + t.count, plan.first_row + plan.row_count);
    }
}

TEST(ResizePlan, NormalisedTensorHasTheFillLayoutAndChannelOrder) {
    PipelineSteps steps;
    steps.resize = ResizeRule::letterbox;
    steps.input_size = {4, 4};
    steps.letterbox_fill = 114.0F;
    steps.mean = {10.0F, 20.0F, 30.0F};
    steps.std = {2.0F, 4.0F, 5.0F};
    steps.bgr = true;
    const ImagePlacement placement{{4, 4, 0, 0, 4}, {2, 2, 0, 1, 2}};  // rows 1 and 2 placed, 0 and 3 filled
    std::vector<std::uint8_t> resampled(4 * 2 * 3);
    for (std::size_t i = 0; i < resampled.size(); i += 3) {
        resampled[i] = 50;       // R
        resampled[i + 1] = 60;   // G
        resampled[i + 2] = 130;  // B
    }
    std::vector<float> tensor(2 * 3 * 16, -1.0F);
    write_normalized(steps, placement, resampled, 1, reinterpret_cast<std::uint8_t*>(tensor.data()));
    const auto at = [&](int c, int y, int x) { return tensor[static_cast<std::size_t>(tensor_offset(true, 1, c, y, x, 4, 4))]; };
    EXPECT_FLOAT_EQ(at(0, 1, 0), (130.0F - 30.0F) / 5.0F);  // channel 0 is blue (bgr), normalised by blue's mean/std
    EXPECT_FLOAT_EQ(at(2, 2, 3), (50.0F - 10.0F) / 2.0F);
    EXPECT_FLOAT_EQ(at(1, 0, 2), (114.0F - 20.0F) / 4.0F);  // fill, normalised as a pixel of that value
    EXPECT_FLOAT_EQ(tensor[0], -1.0F);                      // slot 0 untouched
}

TEST(ResizePlan, HalfConversionRoundsToNearestEven) {
    EXPECT_EQ(float_to_half(1.0F), 0x3C00);
    EXPECT_EQ(float_to_half(-2.0F), 0xC000);
    EXPECT_EQ(float_to_half(65504.0F), 0x7BFF);
    EXPECT_EQ(float_to_half(65520.0F), 0x7C00);  // halfway to the next: rounds to infinity
    EXPECT_EQ(float_to_half(0.1F), 0x2E66);
    EXPECT_EQ(float_to_half(std::ldexp(1.0F, -24)), 0x0001);  // the smallest subnormal
    EXPECT_EQ(float_to_half(1e-9F), 0x0000);
    EXPECT_EQ(float_to_half(1.0F + std::ldexp(1.0F, -11)), 0x3C00);  // a tie: to the even mantissa
    EXPECT_EQ(float_to_half(1.0F + 3 * std::ldexp(1.0F, -11)), 0x3C02);
    EXPECT_EQ(float_to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7C00, 0x7C00);
}

TEST(ResampleMath, RoundsHalfUpAndClampsAsPillowsPasses) {
    EXPECT_EQ(round_to_u8(-3.0F), 0);
    EXPECT_EQ(round_to_u8(0.49F), 0);
    EXPECT_EQ(round_to_u8(0.5F), 1);
    EXPECT_EQ(round_to_u8(254.6F), 255);
    EXPECT_EQ(round_to_u8(300.0F), 255);
    EXPECT_EQ(round_to_u8(std::numeric_limits<float>::quiet_NaN()), 0);
}

TEST(ResampleMath, BoxIouAsTorchvisionIncludingZeroArea) {
    const float a[4] = {0, 0, 10, 10};
    const float b[4] = {5, 0, 15, 10};
    EXPECT_FLOAT_EQ(box_iou(a, b), 50.0F / 150.0F);
    const float far[4] = {20, 20, 30, 30};
    EXPECT_FLOAT_EQ(box_iou(a, far), 0.0F);
    const float point[4] = {3, 3, 3, 3};
    EXPECT_TRUE(std::isnan(box_iou(point, point)));  // 0/0: suppresses nothing
    EXPECT_FALSE(box_iou(point, point) > 0.5F);
}

TEST(ResampleMath, NmsKeysOrderByScoreThenLowerIndex) {
    EXPECT_GT(nms_sort_key(0.9F, 5), nms_sort_key(0.8F, 0));
    EXPECT_GT(nms_sort_key(0.5F, 1), nms_sort_key(0.5F, 2));  // a tie: the lower index sorts first (descending)
    EXPECT_GT(nms_sort_key(0.0F, 9), nms_sort_key(-0.1F, 0));
    EXPECT_GT(nms_sort_key(-0.1F, 9), nms_sort_key(-0.2F, 0));
}

TEST(ResampleMath, CenterSizeDecodingInBothOrders) {
    const auto exp_fn = [](float v) { return std::exp(v); };
    const float prior_xy[4] = {0.5F, 0.4F, 0.2F, 0.1F};
    const float delta_xy[4] = {1.0F, -2.0F, 0.0F, 5.0F};  // cx += 0.1 * 0.2, cy -= 0.2 * 0.1, h *= e
    float box[4];
    decode_center_size(delta_xy, prior_xy, false, 10.0F, 5.0F, exp_fn, box);
    EXPECT_NEAR(box[0], 0.42F, 1e-6F);
    EXPECT_NEAR(box[2], 0.62F, 1e-6F);
    EXPECT_NEAR(box[1], 0.38F - 0.05F * std::exp(1.0F), 1e-6F);
    EXPECT_NEAR(box[3], 0.38F + 0.05F * std::exp(1.0F), 1e-6F);
    const float prior_yx[4] = {0.4F, 0.5F, 0.1F, 0.2F};
    const float delta_yx[4] = {-2.0F, 1.0F, 5.0F, 0.0F};
    float same[4];
    decode_center_size(delta_yx, prior_yx, true, 10.0F, 5.0F, exp_fn, same);
    for (int k = 0; k < 4; ++k) EXPECT_FLOAT_EQ(same[k], box[k]);
}

}  // namespace
}  // namespace inferbench::pipeline
