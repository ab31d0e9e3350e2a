// The zoo's pipeline table (every zoo model has a pipeline with its source or a reason for none; each pipeline fits
// the graph the zoo writes) and a user's steps checked against a graph's declared input and outputs.
#include "pipeline/model_pipelines.hpp"

#include <gtest/gtest.h>

#include <cstddef>

#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/zoo.hpp"

namespace inferbench::pipeline {
namespace {

using models::onnx::DataType;
using models::onnx::OnnxDimension;
using models::onnx::OnnxGraphSignature;
using models::onnx::OnnxValueInfo;

OnnxValueInfo value(std::string name, std::vector<OnnxDimension> dims, DataType type = DataType::float32) {
    return {std::move(name), type, true, std::move(dims)};
}

OnnxGraphSignature graph(std::vector<OnnxValueInfo> inputs, std::vector<OnnxValueInfo> outputs) {
    OnnxGraphSignature g;
    g.inputs = std::move(inputs);
    g.outputs = std::move(outputs);
    return g;
}

// The message of the UserError `f` throws; empty when it throws none.
template <typename F>
std::string user_error(F f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return {};
}

TEST(ZooPipelines, EveryZooModelHasAPipelineWithItsSourceOrAReasonForNone) {
    for (const std::string& name : models::zoo_names()) {
        SCOPED_TRACE(name);
        const auto pipeline = zoo_pipeline(name);
        EXPECT_NE(pipeline.has_value(), !no_pipeline_reason(name).empty());
        if (pipeline) {
            EXPECT_GT(pipeline->source.size(), 40U);
        }
    }
    EXPECT_EQ(zoo_pipeline_models().size(), 15U);
    EXPECT_EQ(no_pipeline_reason("bert"),
              "bert takes token ids (SQuAD question and context), not images: no image "
              "pipeline");
    EXPECT_NE(no_pipeline_reason("3d-unet").find("volume"), std::string::npos);
    const std::string decoder = models::decoder_model_names().front();
    EXPECT_NE(no_pipeline_reason(decoder).find("decoder language model"), std::string::npos);
    EXPECT_EQ(no_pipeline_reason("/models/mine.onnx"), "");
    EXPECT_FALSE(zoo_pipeline("/models/mine.onnx"));
}

TEST(ZooPipelines, FollowThePublishedRecipes) {
    const auto resnet = zoo_pipeline("resnet50");
    ASSERT_TRUE(resnet);
    EXPECT_EQ(resnet->steps.resize, ResizeRule::shorter_side_crop);
    EXPECT_EQ(resnet->steps.resize_shorter, 256);
    EXPECT_EQ(resnet->steps.std, (std::array<float, 3>{1, 1, 1}));  // MLPerf subtracts the mean only
    const auto ssd = zoo_pipeline("ssd-resnet34");
    ASSERT_TRUE(ssd);
    EXPECT_EQ(ssd->steps.input_size, (ImageSize{1200, 1200}));
    EXPECT_EQ(ssd->head, (DetectionHead{BoxCoding::ssd_r34_dboxes, 200}));
    EXPECT_FLOAT_EQ(ssd->steps.score_threshold, 0.05F);
    const auto yolo = zoo_pipeline("yolov3-608");
    ASSERT_TRUE(yolo);
    EXPECT_EQ(yolo->steps.resize, ResizeRule::letterbox);
    EXPECT_EQ(yolo->steps.input_size, (ImageSize{608, 608}));
    EXPECT_EQ(zoo_pipeline("yolov5m")->head.coding, BoxCoding::yolov5);
    EXPECT_EQ(zoo_pipeline("swin-b")->steps.resize_shorter, 248);
}

// The zoo's smaller models, built in memory: their pipelines pass the check a user's model gets, and the box
// coding the check tells from the outputs is the one the zoo table names.
TEST(ZooPipelines, FitTheGraphsTheZooWrites) {
    for (const char* name :
         {"resnet50", "mobilenet", "mobilenet-v2", "ssd-mobilenet", "ssd-resnet34", "yolov3", "yolov5s", "swin-t"}) {
        SCOPED_TRACE(name);
        const std::string bytes = models::zoo_model_bytes(name, 1);
        const OnnxGraphSignature signature =
            models::onnx::read_onnx_signature(std::as_bytes(std::span(bytes.data(), bytes.size())), name);
        const auto zoo = zoo_pipeline(name);
        ASSERT_TRUE(zoo);
        const ModelPipeline checked = user_pipeline(name, zoo->steps, signature);
        // A user's YOLO outputs cannot say v3 from v5 (the same shapes): the check takes them as YOLOv3's.
        const BoxCoding told = zoo->head.coding == BoxCoding::yolov5 ? BoxCoding::yolov3 : zoo->head.coding;
        EXPECT_EQ(checked.head.coding, told);
    }
}

const OnnxValueInfo kImage = value("image", {std::string("batch"), 3, 224, 224});

TEST(UserPipeline, TakesStepsThatFitAndTellsTheBoxCodingFromTheOutputs) {
    const PipelineSteps classify{.input_size = {224, 224}, .post = PostProcess::softmax_topk};
    EXPECT_EQ(user_pipeline("m.onnx", classify, graph({kImage}, {value("logits", {std::string("batch"), 1000})})).steps,
              classify);

    PipelineSteps ssd{.input_size = {300, 300}, .post = PostProcess::ssd_boxes};
    const OnnxValueInfo input300 = value("x", {1, 3, 300, 300});
    EXPECT_EQ(user_pipeline("m.onnx", ssd, graph({input300}, {value("b", {1, 1917, 4}), value("c", {1, 1917, 91})}))
                  .head.coding,
              BoxCoding::ssd_tf_anchors);
    ssd.input_size = {1200, 1200};
    EXPECT_EQ(
        user_pipeline("m.onnx", ssd,
                      graph({value("x", {1, 3, 1200, 1200})}, {value("l", {1, 4, 15130}), value("c", {1, 81, 15130})}))
            .head,
        (DetectionHead{BoxCoding::ssd_r34_dboxes, 200}));

    const PipelineSteps yolo{
        .resize = ResizeRule::letterbox, .input_size = {416, 416}, .post = PostProcess::yolo_boxes};
    EXPECT_EQ(
        user_pipeline("m.onnx", yolo,
                      graph({value("x", {1, 3, 416, 416})},
                            {value("a", {1, 255, 13, 13}), value("b", {1, 255, 26, 26}), value("c", {1, 255, 52, 52})}))
            .head.coding,
        BoxCoding::yolov3);

    const PipelineSteps nhwc_u8{.input_size = {224, 224}, .layout = TensorLayout::nhwc, .pixel_type = PixelType::u8};
    EXPECT_NO_THROW(user_pipeline(
        "m.onnx", nhwc_u8, graph({value("x", {std::string("n"), 224, 224, 3}, DataType::uint8)}, {value("y", {1})})));
}

TEST(UserPipeline, RefusesStepsThatDisagreeWithTheGraphInOneLine) {
    const PipelineSteps classify{.input_size = {300, 300}, .post = PostProcess::softmax_topk};
    const auto logits = value("logits", {1, 1000});
    EXPECT_EQ(user_error([&] { user_pipeline("m.onnx", classify, graph({kImage}, {logits})); }),
              "m.onnx: the plan's pipeline.steps do not fit the model: input 'image' is [batch, 3, 224, 224], the "
              "steps make 300x300 nchw RGB images: set pipeline.steps' input_size and layout to the model's");
    PipelineSteps steps = classify;
    steps.input_size = {224, 224};
    steps.pixel_type = PixelType::f16;
    EXPECT_NE(user_error([&] {
                  user_pipeline("m.onnx", steps, graph({kImage}, {logits}));
              }).find("input 'image' takes float32, the steps make float16"),
              std::string::npos);
    steps.pixel_type = PixelType::f32;
    EXPECT_NE(user_error([&] {
                  user_pipeline("m.onnx", steps, graph({kImage, kImage}, {logits}));
              }).find("one input; the model declares 2"),
              std::string::npos);
    steps.layout = TensorLayout::nhwc;
    EXPECT_FALSE(user_error([&] { user_pipeline("m.onnx", steps, graph({kImage}, {logits})); }).empty());

    steps = classify;
    steps.input_size = {224, 224};
    steps.post = PostProcess::ssd_boxes;
    const std::string ssd_error = user_error([&] { user_pipeline("m.onnx", steps, graph({kImage}, {logits})); });
    EXPECT_NE(ssd_error.find("post step ssd_boxes needs"), std::string::npos) << ssd_error;
    EXPECT_NE(ssd_error.find("'logits' [1, 1000]"), std::string::npos) << ssd_error;
    EXPECT_EQ(ssd_error.find('\n'), std::string::npos);

    steps.post = PostProcess::yolo_boxes;
    const auto wrong_grid = value("a", {1, 255, 10, 10});  // stride 22.4
    EXPECT_FALSE(user_error([&] {
                     user_pipeline("m.onnx", steps, graph({kImage}, {wrong_grid, wrong_grid, wrong_grid}));
                 }).empty());
    steps.post = PostProcess::argmax;
    EXPECT_FALSE(user_error([&] { user_pipeline("m.onnx", steps, graph({kImage}, {logits})); }).empty());
    steps.post = PostProcess::softmax_topk;
    steps.top_k = 0;
    EXPECT_NE(user_error([&] { user_pipeline("m.onnx", steps, graph({kImage}, {logits})); }).find("top_k 0"),
              std::string::npos);
}

}  // namespace
}  // namespace inferbench::pipeline
