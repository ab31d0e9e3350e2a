// Softmax and top-k, argmax, the backend's tensors as floats, and a batch's post-processing by its steps: decoded
// boxes of a planted object through NMS to one detection.
#include "pipeline/postprocess.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.hpp"

namespace inferbench::pipeline {
namespace {

TEST(SoftmaxTopK, GivesTheMostProbableClassesWithTheirProbabilities) {
    const std::vector<float> logits = {1.0F, 3.0F, 2.0F,  0.0F,   // image 0
                                       5.0F, 5.0F, -1.0F, 5.0F};  // image 1: a three-way tie
    const auto top = softmax_top_k({logits, {2, 4}}, 2);
    ASSERT_EQ(top.size(), 2U);
    const double sum0 = std::exp(1.0) + std::exp(3.0) + std::exp(2.0) + std::exp(0.0);
    ASSERT_EQ(top[0].size(), 2U);
    EXPECT_EQ(top[0][0].class_id, 1);
    EXPECT_NEAR(top[0][0].score, std::exp(3.0) / sum0, 1e-6);
    EXPECT_EQ(top[0][1].class_id, 2);
    EXPECT_NEAR(top[0][1].score, std::exp(2.0) / sum0, 1e-6);
    EXPECT_EQ(top[1][0].class_id, 0);  // equal: the lower class first
    EXPECT_EQ(top[1][1].class_id, 1);
    EXPECT_FLOAT_EQ(top[1][0].score, top[1][1].score);
}

TEST(SoftmaxTopK, TakesTrailingOnesAndCapsKAtTheClasses) {
    const std::vector<float> logits = {1000.0F, 0.0F, -1000.0F};  // no overflow: the largest is subtracted first
    const auto top = softmax_top_k({logits, {1, 3, 1, 1}}, 5);
    ASSERT_EQ(top[0].size(), 3U);
    EXPECT_FLOAT_EQ(top[0][0].score, 1.0F);
    EXPECT_EQ(top[0][2].class_id, 2);
    EXPECT_THROW(softmax_top_k({logits, {1, 1, 3}}, 1), UserError);
    EXPECT_THROW(softmax_top_k({logits, {1, 3}}, 0), UserError);
    EXPECT_THROW(softmax_top_k({logits, {1, 4}}, 1), UserError);  // the shape promises more values than there are
}

TEST(ArgmaxClasses, TakesTheFirstOfEqualScoresPerPosition) {
    // [1 image, 3 classes, 1 x 3]: position 0 class 2, position 1 a tie of 0 and 1, position 2 class 0.
    const std::vector<float> scores = {0, 5, 9, 1, 5, 2, 3, 1, 1};
    const auto labels = argmax_classes({scores, {1, 3, 1, 3}});
    EXPECT_EQ(labels, (std::vector<std::vector<std::int32_t>>{{2, 0, 0}}));
    const std::vector<float> two = {0, 1, 2, 3};  // [2 images, 2 classes, 1]
    EXPECT_EQ(argmax_classes({two, {2, 2, 1}}), (std::vector<std::vector<std::int32_t>>{{1}, {1}}));
    EXPECT_THROW(argmax_classes({two, {2, 2}}), UserError);
}

TEST(FloatTensors, ViewsFloatsInPlaceAndWidensHalves) {
    HostTensor f32{{"logits", DType::f32, {1, 2}}, std::vector<std::byte>(8)};
    const float values[2] = {1.5F, -2.0F};
    std::memcpy(f32.data.data(), values, 8);
    HostTensor f16{{"half", DType::f16, {1, 2}}, std::vector<std::byte>(4)};
    const std::uint16_t halves[2] = {0x3C00, 0xC000};  // 1.0, -2.0
    std::memcpy(f16.data.data(), halves, 4);
    const std::vector<HostTensor> outputs = {f32, f16};
    std::vector<std::vector<float>> storage;
    const auto views = float_tensors(outputs, storage);
    ASSERT_EQ(views.size(), 2U);
    EXPECT_EQ(views[0].values.data(), reinterpret_cast<const float*>(outputs[0].data.data()));
    EXPECT_EQ(views[1].shape, (std::vector<std::int64_t>{1, 2}));
    EXPECT_FLOAT_EQ(views[1].values[0], 1.0F);
    EXPECT_FLOAT_EQ(views[1].values[1], -2.0F);
    HostTensor short_one{{"short", DType::f32, {1, 3}}, std::vector<std::byte>(8)};
    EXPECT_THROW(float_tensors(std::vector<HostTensor>{short_one}, storage), UserError);
}

// YOLOv3 outputs at 64x64 (grids 2, 4, 8) with every logit very low but one object planted twice: a 33x23 box
// centred at (20, 28) of class 7 in the stride-8 grid's cell (2, 3), anchor 2, and a slightly weaker copy in the
// neighbouring cell, which NMS removes.
std::vector<std::vector<float>> planted_yolo_outputs() {
    std::vector<std::vector<float>> outputs;
    for (const std::int64_t side : {2, 4, 8}) outputs.emplace_back(static_cast<std::size_t>(255 * side * side), -20.0F);
    const auto set = [&](std::int64_t anchor, std::int64_t k, std::int64_t y, std::int64_t x, float v) {
        outputs[2][static_cast<std::size_t>(((anchor * 85 + k) * 8 + y) * 8 + x)] = v;
    };
    for (const std::int64_t x : {2, 3}) {  // sigmoid(0) = 0.5: the centre of the cell, exp(0) = 1: the anchor's size
        for (const std::int64_t k : {0, 1, 2, 3}) set(2, k, 3, x, 0.0F);
        set(2, 4, 3, x, x == 2 ? 8.0F : 6.0F);
        set(2, 5 + 7, 3, x, 8.0F);
    }
    return outputs;
}

TEST(DecodeOutputs, FindsAPlantedObjectOnceAfterNms) {
    const std::vector<std::vector<float>> values = planted_yolo_outputs();
    const std::vector<FloatTensor> outputs = {
        {values[0], {1, 255, 2, 2}}, {values[1], {1, 255, 4, 4}}, {values[2], {1, 255, 8, 8}}};
    PipelineSteps steps{.resize = ResizeRule::letterbox,
                        .input_size = {64, 64},
                        .post = PostProcess::yolo_boxes,
                        .score_threshold = 0.5F,
                        .iou_threshold = 0.45F,
                        .max_detections = 10};
    const DetectionHead head{BoxCoding::yolov3, 0};
    BatchResults results = decode_outputs(steps, head, outputs);
    ASSERT_EQ(results.candidates.size(), 1U);
    EXPECT_EQ(results.candidates[0].size(), 2U);
    EXPECT_TRUE(results.detections.empty()) << "NMS is its own stage";
    suppress_boxes(steps, head, results);
    ASSERT_EQ(results.detections.size(), 1U);
    ASSERT_EQ(results.detections[0].size(), 1U);
    const Detection& d = results.detections[0][0];
    EXPECT_EQ(d.class_id, 7);
    EXPECT_NEAR(d.score, 1.0 / (1.0 + std::exp(-8.0)) / (1.0 + std::exp(-8.0)), 1e-6);
    EXPECT_NEAR(d.box.x1, 20.0 - 16.5, 1e-4);
    EXPECT_NEAR(d.box.y1, 28.0 - 11.5, 1e-4);
    EXPECT_NEAR(d.box.x2, 20.0 + 16.5, 1e-4);
    EXPECT_NEAR(d.box.y2, 28.0 + 11.5, 1e-4);
}

TEST(DecodeOutputs, ClassifiesBySoftmaxAndLabelsByArgmax) {
    const std::vector<float> logits = {0, 2, 1};
    const std::vector<FloatTensor> outputs = {{logits, {1, 3}}};
    PipelineSteps steps{.post = PostProcess::softmax_topk, .top_k = 1};
    BatchResults results = decode_outputs(steps, {}, outputs);
    ASSERT_EQ(results.top.size(), 1U);
    EXPECT_EQ(results.top[0][0].class_id, 1);
    steps.post = PostProcess::argmax;
    const std::vector<FloatTensor> planes = {{logits, {1, 3, 1}}};
    EXPECT_EQ(decode_outputs(steps, {}, planes).labels, (std::vector<std::vector<std::int32_t>>{{1}}));
    steps.post = PostProcess::none;
    EXPECT_TRUE(decode_outputs(steps, {}, outputs).top.empty());
    steps.post = PostProcess::softmax_topk;
    EXPECT_THROW(decode_outputs(steps, {}, {}), UserError);
}

}  // namespace
}  // namespace inferbench::pipeline
