// The zoo image models' published pre- and post-processing, one definition per model with its source, and a user's
// model's steps checked against what its graph declares.
#include "pipeline/model_pipelines.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/zoo.hpp"

namespace inferbench::pipeline {

namespace {

using models::onnx::DataType;
using models::onnx::OnnxDimension;
using models::onnx::OnnxValueInfo;

constexpr std::array<float, 3> kImageNetMean = {123.675F, 116.28F, 103.53F};  // 0.485 0.456 0.406 of 255
constexpr std::array<float, 3> kImageNetStd = {58.395F, 57.12F, 57.375F};     // 0.229 0.224 0.225 of 255

PipelineSteps classifier(std::int64_t side, std::int64_t shorter, std::array<float, 3> mean, std::array<float, 3> std) {
    return {.resize = ResizeRule::shorter_side_crop,
            .input_size = {side, side},
            .resize_shorter = shorter,
            .mean = mean,
            .std = std,
            .post = PostProcess::softmax_topk,
            .top_k = 5};
}

PipelineSteps yolo(std::int64_t side, float fill, float score, float iou, std::int64_t max_detections) {
    return {.resize = ResizeRule::letterbox,
            .input_size = {side, side},
            .letterbox_fill = fill,
            .std = {255.0F, 255.0F, 255.0F},
            .post = PostProcess::yolo_boxes,
            .score_threshold = score,
            .iou_threshold = iou,
            .max_detections = max_detections};
}

struct ZooPipeline {
    std::string_view model;
    ModelPipeline pipeline;
};

// Swin's timm recipe: crop_pct 0.9 (224 / 0.9 = 248, floored as timm does), ImageNet's mean and std. timm resizes
// bicubic; PipelineSteps has one resize filter (pipeline/resize's), so the filter is not Swin's.
ModelPipeline swin(std::string_view timm_name) {
    return {classifier(224, 248, kImageNetMean, kImageNetStd),
            {},
            fmt::format("timm {} pretrained_cfg: input 224, crop_pct 0.9, IMAGENET_DEFAULT_MEAN/STD (timm resizes "
                        "bicubic)",
                        timm_name)};
}

ModelPipeline yolov3(std::int64_t side) {
    return {yolo(side, 127.5F, 0.5F, 0.45F, 100),
            {BoxCoding::yolov3, 0},
            "darknet (pjreddie/darknet): letterbox_image with 0.5 grey, pixels / 255, RGB; [yolo] layers of "
            "cfg/yolov3.cfg; test_detector's thresh 0.5 and nms 0.45; at most 100 per image as COCO's evaluation"};
}

ModelPipeline yolov5() {
    return {yolo(640, 114.0F, 0.25F, 0.45F, 1000),
            {BoxCoding::yolov5, 0},
            "ultralytics yolov5 v7.0: utils/augmentations.py letterbox (colour 114), pixels / 255, RGB; "
            "models/yolo.py Detect; detect.py's conf_thres 0.25, iou_thres 0.45, max_det 1000"};
}

const std::vector<ZooPipeline>& zoo_pipelines() {
    static const std::vector<ZooPipeline> table = {
        {"resnet50",
         {classifier(224, 256, {123.68F, 116.78F, 103.94F}, {1.0F, 1.0F, 1.0F}),
          {},
          "MLPerf Inference vision/classification_and_detection/python/dataset.py pre_process_vgg: shorter side to "
          "256 (224 / 0.875), centre crop 224, RGB, mean 123.68 116.78 103.94 subtracted, no scaling; softmax"}},
        // TF-slim's MobileNet v1 (the zoo's layout) takes [-1, 1] inputs, as MLPerf's mobilenet does.
        {"mobilenet",
         {classifier(224, 256, {127.5F, 127.5F, 127.5F}, {127.5F, 127.5F, 127.5F}),
          {},
          "MLPerf Inference dataset.py pre_process_mobilenet (TF-slim MobileNet v1's inception preprocessing): "
          "shorter side to 256 (224 / 0.875), centre crop 224, RGB, (pixel / 255 - 0.5) * 2"}},
        {"mobilenet-v2",
         {classifier(224, 256, kImageNetMean, kImageNetStd),
          {},
          "torchvision MobileNet_V2_Weights.IMAGENET1K_V1 transforms (ImageClassification): resize 256, centre crop "
          "224, bilinear, ImageNet mean and std"}},
        {"ssd-mobilenet",
         {{.resize = ResizeRule::plain,
           .input_size = {300, 300},
           .mean = {127.5F, 127.5F, 127.5F},
           .std = {127.5F, 127.5F, 127.5F},
           .post = PostProcess::ssd_boxes,
           .score_threshold = 0.3F,
           .iou_threshold = 0.6F,
           .max_detections = 100},
          {BoxCoding::ssd_tf_anchors, 0},
          "MLPerf Inference dataset.py pre_process_coco_pt_mobilenet (resize to 300x300, (pixel - 127.5) / 127.5) "
          "and models/ssd_mobilenet_v1.py (sigmoid scores, score_threshold 0.3, nms_threshold 0.6, TF's box coder "
          "10 10 5 5 and ssd_anchor_generator); max_total_detections 100 of ssd_mobilenet_v1_coco.config"}},
        {"ssd-resnet34",
         {{.resize = ResizeRule::plain,
           .input_size = {1200, 1200},
           .mean = kImageNetMean,
           .std = kImageNetStd,
           .post = PostProcess::ssd_boxes,
           .score_threshold = 0.05F,
           .iou_threshold = 0.5F,
           .max_detections = 200},
          {BoxCoding::ssd_r34_dboxes, 200},
          "MLPerf Inference dataset.py pre_process_coco_resnet34 (resize to 1200x1200, ImageNet mean and std) and "
          "models/ssd_r34.py (dboxes_R34_coco, Encoder scale_xy 0.1 scale_wh 0.2, softmax scores, decode_single: "
          "score > 0.05, 200 per class, IoU criteria 0.5, max_output 200)"}},
        {"yolov3", yolov3(416)},
        {"yolov3-608", yolov3(608)},
        {"yolov5s", yolov5()},
        {"yolov5m", yolov5()},
        {"yolov5l", yolov5()},
        {"yolov5x", yolov5()},
        {"swin-t", swin("swin_tiny_patch4_window7_224")},
        {"swin-s", swin("swin_small_patch4_window7_224")},
        {"swin-b", swin("swin_base_patch4_window7_224")},
        {"swin-l", swin("swin_large_patch4_window7_224")},
    };
    return table;
}

// ---- a user's model ----

std::string dims_text(const OnnxValueInfo& v) {
    std::vector<std::string> parts;
    for (const OnnxDimension& d : v.dims) {
        parts.push_back(std::holds_alternative<std::int64_t>(d)
                            ? std::to_string(std::get<std::int64_t>(d))
                            : (std::get<std::string>(d).empty() ? "?" : std::get<std::string>(d)));
    }
    return fmt::format("[{}]", fmt::join(parts, ", "));
}

// A dimension's size where the graph fixes it; nothing where it is symbolic or unknown.
std::optional<std::int64_t> fixed(const OnnxValueInfo& v, std::size_t i) {
    if (i >= v.dims.size() || !std::holds_alternative<std::int64_t>(v.dims[i])) return std::nullopt;
    const std::int64_t d = std::get<std::int64_t>(v.dims[i]);
    return d > 0 ? std::optional(d) : std::nullopt;
}

bool agrees(const OnnxValueInfo& v, std::size_t i, std::int64_t expected) {
    const auto d = fixed(v, i);
    return !d || *d == expected;
}

DataType element_type(PixelType type) {
    switch (type) {
        case PixelType::f32:
            return DataType::float32;
        case PixelType::f16:
            return DataType::float16;
        case PixelType::u8:
            return DataType::uint8;
    }
    return DataType::undefined;
}

struct Checker {
    std::string_view model;
    const PipelineSteps& steps;

    [[noreturn]] void fail(const std::string& what) const {
        throw UserError(fmt::format("{}: the plan's pipeline.steps do not fit the model: {}", model, what));
    }

    void input(std::span<const OnnxValueInfo> inputs) const {
        if (inputs.size() != 1) {
            fail(fmt::format("an image pipeline feeds one input; the model declares {}", inputs.size()));
        }
        const OnnxValueInfo& in = inputs.front();
        const bool nchw = steps.layout == TensorLayout::nchw;
        const std::size_t channel = nchw ? 1 : 3;
        const std::size_t rows = nchw ? 2 : 1;
        const auto& size = steps.input_size;
        if (!in.has_shape || in.dims.size() != 4 || !agrees(in, channel, 3) || !agrees(in, rows, size.height) ||
            !agrees(in, rows + 1, size.width)) {
            fail(fmt::format(
                "input '{}' is {}, the steps make {} {} RGB images: set pipeline.steps' input_size and "
                "layout to the model's",
                in.name, in.has_shape ? dims_text(in) : "of unknown shape", to_string(size), to_string(steps.layout)));
        }
        if (in.elem_type != element_type(steps.pixel_type)) {
            fail(fmt::format("input '{}' takes {}, the steps make {}: set pipeline.steps' pixel_type", in.name,
                             models::onnx::to_string(in.elem_type), to_string(steps.pixel_type)));
        }
    }

    [[noreturn]] void outputs_unfit(std::span<const OnnxValueInfo> outputs, std::string_view needs) const {
        std::vector<std::string> shapes;
        for (const OnnxValueInfo& o : outputs) shapes.push_back(fmt::format("'{}' {}", o.name, dims_text(o)));
        fail(fmt::format(
            "post step {} needs {}; the model's outputs are {}: set pipeline.steps' post to the step "
            "its outputs take",
            to_string(steps.post), needs, shapes.empty() ? "none" : fmt::format("{}", fmt::join(shapes, ", "))));
    }

    DetectionHead ssd(std::span<const OnnxValueInfo> outputs) const {
        constexpr std::string_view needs =
            "boxes [b, n, 4] and scores [b, n, classes] (TF SSD) or locs [b, 4, n] and confs [b, classes, n] "
            "(MLPerf SSD-ResNet34)";
        if (outputs.size() != 2 || outputs[0].dims.size() != 3 || outputs[1].dims.size() != 3) {
            outputs_unfit(outputs, needs);
        }
        const OnnxValueInfo& boxes = outputs[0];
        if (fixed(boxes, 2) == 4) {
            const auto anchors = static_cast<std::int64_t>(ssd_mobilenet_priors(steps.input_size.width).size());
            if (steps.input_size.width != steps.input_size.height || !agrees(boxes, 1, anchors) ||
                !agrees(outputs[1], 1, anchors)) {
                outputs_unfit(outputs, fmt::format("{} anchors for a square {} input (TF SSD)", anchors,
                                                   to_string(steps.input_size)));
            }
            return {BoxCoding::ssd_tf_anchors, 0};
        }
        if (fixed(boxes, 1) == 4) {
            const auto dboxes = static_cast<std::int64_t>(ssd_resnet34_priors().size());
            if (steps.input_size != ImageSize{1200, 1200} || !agrees(boxes, 2, dboxes) ||
                !agrees(outputs[1], 2, dboxes)) {
                outputs_unfit(outputs,
                              fmt::format("{} default boxes of a 1200x1200 input (MLPerf SSD-ResNet34)", dboxes));
            }
            return {BoxCoding::ssd_r34_dboxes, 200};
        }
        outputs_unfit(outputs, needs);
    }

    DetectionHead yolo(std::span<const OnnxValueInfo> outputs) const {
        constexpr std::string_view needs = "three [b, 3 * (5 + classes), h, w] outputs of strides 8, 16 and 32";
        if (outputs.size() != 3) outputs_unfit(outputs, needs);
        std::vector<std::int64_t> strides;
        for (const OnnxValueInfo& o : outputs) {
            const auto channels = fixed(o, 1);
            const auto rows = fixed(o, 2);
            if (o.dims.size() != 4 || (channels && (*channels % 3 != 0 || *channels / 3 <= 5))) {
                outputs_unfit(outputs, needs);
            }
            if (rows) strides.push_back(*rows > 0 ? steps.input_size.height / *rows : 0);
        }
        for (const std::int64_t s : strides) {
            if (s != 8 && s != 16 && s != 32) outputs_unfit(outputs, needs);
        }
        return {BoxCoding::yolov3, 0};
    }

    DetectionHead outputs(std::span<const OnnxValueInfo> declared) const {
        switch (steps.post) {
            case PostProcess::none:
                return {};
            case PostProcess::softmax_topk:
                if (declared.empty() || declared[0].dims.size() < 2) outputs_unfit(declared, "logits [b, classes]");
                return {};
            case PostProcess::argmax:
                if (declared.empty() || declared[0].dims.size() < 3) {
                    outputs_unfit(declared, "scores [b, classes, h, w]");
                }
                return {};
            case PostProcess::ssd_boxes:
                return ssd(declared);
            case PostProcess::yolo_boxes:
                return yolo(declared);
        }
        return {};
    }
};

}  // namespace

std::optional<ModelPipeline> zoo_pipeline(std::string_view model) {
    for (const ZooPipeline& z : zoo_pipelines()) {
        if (z.model == model) return z.pipeline;
    }
    return std::nullopt;
}

std::vector<std::string> zoo_pipeline_models() {
    std::vector<std::string> names;
    for (const std::string& name : models::zoo_names()) {
        if (zoo_pipeline(name)) names.push_back(name);
    }
    return names;
}

std::string no_pipeline_reason(std::string_view model) {
    if (zoo_pipeline(model)) return {};
    if (model == "bert" || model == "bert-base") {
        return fmt::format("{} takes token ids (SQuAD question and context), not images: no image pipeline", model);
    }
    if (model == "3d-unet") {
        return "3d-unet takes a CT volume (KiTS19, 128x128x128 voxels), not 2D images: no image pipeline";
    }
    if (model == "null") return "the null model has no inputs to make from images";
    if (models::find_decoder_model(model) != nullptr) {
        return fmt::format("{} is a decoder language model: it takes tokens, not images", model);
    }
    if (models::find_zoo_model(model) != nullptr) {
        return fmt::format("zoo model {} has no image pipeline defined", model);
    }
    return {};
}

ModelPipeline user_pipeline(std::string_view model, const PipelineSteps& steps,
                            const models::onnx::OnnxGraphSignature& graph) {
    const Checker check{model, steps};
    if (steps.post == PostProcess::softmax_topk && steps.top_k <= 0) {
        check.fail(fmt::format("top_k {} is not positive", steps.top_k));
    }
    if (steps.score_threshold < 0.0F || steps.score_threshold >= 1.0F || steps.iou_threshold < 0.0F ||
        steps.iou_threshold > 1.0F) {
        check.fail(fmt::format("score_threshold {} must lie in [0, 1) and iou_threshold {} in [0, 1]",
                               steps.score_threshold, steps.iou_threshold));
    }
    check.input(graph.inputs);
    ModelPipeline pipeline{steps, check.outputs(graph.outputs), "the plan's pipeline.steps"};
    return pipeline;
}

}  // namespace inferbench::pipeline
