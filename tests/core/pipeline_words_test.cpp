#include "core/pipeline.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(PipelineWords, EveryStageReadsBackAsItself) {
    for (PipelineStage stage : kPipelineStages) EXPECT_EQ(parse_pipeline_stage(to_string(stage)), stage);
    EXPECT_FALSE(parse_pipeline_stage("preprocess").has_value());
}

TEST(PipelineWords, PlacesModesAndStepsReadBack) {
    EXPECT_EQ(parse_stage_place("gpu"), StagePlace::gpu);
    EXPECT_EQ(parse_pipeline_mode(to_string(PipelineMode::overlapped)), PipelineMode::overlapped);
    EXPECT_EQ(parse_resize_rule("letterbox"), ResizeRule::letterbox);
    EXPECT_EQ(parse_post_process("yolo_boxes"), PostProcess::yolo_boxes);
    EXPECT_EQ(parse_pixel_type("uint8"), PixelType::u8);
    EXPECT_EQ(parse_tensor_layout("nhwc"), TensorLayout::nhwc);
    EXPECT_EQ(parse_image_format("png"), ImageFormat::png);
    EXPECT_FALSE(parse_stage_place("GPU").has_value());
}

TEST(PipelineWords, ImageSizeIsWidthByHeightWithinBounds) {
    EXPECT_EQ(parse_image_size("640x480"), (ImageSize{640, 480}));
    EXPECT_EQ(to_string(ImageSize{1920, 1080}), "1920x1080");
    EXPECT_FALSE(parse_image_size("640").has_value());
    EXPECT_FALSE(parse_image_size("0x480").has_value());
    EXPECT_FALSE(parse_image_size("640x-1").has_value());
    EXPECT_FALSE(parse_image_size("30000x30000").has_value());
    EXPECT_FALSE(parse_image_size("640x480x3").has_value());
    EXPECT_TRUE(parse_image_size("16384x16384").has_value());
}

TEST(PipelineWords, SettingsAreInactiveWithoutImages) {
    PipelineSettings settings;
    EXPECT_FALSE(settings.active());
    settings.images = std::string(kSyntheticImages);
    EXPECT_TRUE(settings.active());
}

}  // namespace
}  // namespace inferbench
