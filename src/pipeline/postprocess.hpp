// What a model's outputs become, per image of a batch: class probabilities and the top k (classifiers), boxes
// decoded against a detector's priors or grid (SSD, YOLO) and then suppressed (nms.hpp), per-pixel classes
// (segmentation). The functions read the backend's output tensors as floats with their shapes.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "core/pipeline.hpp"
#include "pipeline/nms.hpp"

namespace inferbench::pipeline {

// One output tensor of a batch as floats, row-major, the batch its first dimension.
struct FloatTensor {
    std::span<const float> values;
    std::vector<std::int64_t> shape;
};

// The backend's outputs as FloatTensors: f32 tensors viewed in place, others (f16, bf16, ...) widened into
// `storage`, which must outlive the views.
std::vector<FloatTensor> float_tensors(std::span<const HostTensor> outputs, std::vector<std::vector<float>>& storage);

struct ClassScore {
    std::int64_t class_id = 0;
    float score = 0;  // softmax probability
    friend bool operator==(const ClassScore&, const ClassScore&) = default;
};

// Softmax over the classes of logits [batch, classes] (trailing 1s allowed: [batch, classes, 1, 1]) and each
// image's k most probable classes, most probable first (equal: lower class first), as torch.topk of the softmax.
std::vector<std::vector<ClassScore>> softmax_top_k(const FloatTensor& logits, std::int64_t k);

// Segmentation: scores [batch, classes, d1, d2, ...] to each image's class per position (d1*d2*... values), the
// first of equal largest scores as torch.argmax.
std::vector<std::vector<std::int32_t>> argmax_classes(const FloatTensor& scores);

// How a detector's raw outputs encode boxes; each decoder follows its model's published post-processing.
enum class BoxCoding {
    none,
    // TF object detection's SSD (MLPerf's ssd-mobilenet): boxes [b, anchors, 4] as (ty, tx, th, tw) with scale
    // factors 10, 10, 5, 5 against ssd_anchor_generator's anchors; class_logits [b, anchors, classes] through a
    // sigmoid, class 0 the background (class ids 1..90: COCO's ids).
    ssd_tf_anchors,
    // MLPerf's SSD-ResNet34 (ssd_r34.py): locs [b, 4, boxes] as (x, y, w, h) with scales 0.1 and 0.2 against
    // dboxes_R34_coco, confs [b, classes, boxes] through a softmax over the classes, class 0 the background
    // (class ids 1..80).
    ssd_r34_dboxes,
    // darknet's YOLOv3 [yolo] layers: [b, 3 * (5 + classes), h, w] per scale, x y = (sigmoid(t) + cell) * stride,
    // w h = exp(t) * anchor, score = sigmoid(objectness) * sigmoid(class) (class ids 0..79).
    yolov3,
    // ultralytics' YOLOv5 Detect: the same outputs, x y = (2 sigmoid(t) - 0.5 + cell) * stride,
    // w h = (2 sigmoid(t))^2 * anchor, the same score.
    yolov5,
};
std::string_view to_string(BoxCoding coding);

// A detector's box decoding beyond PipelineSteps' thresholds.
struct DetectionHead {
    BoxCoding coding = BoxCoding::none;
    // At most this many highest-scoring boxes of each class enter NMS (MLPerf's SSD-ResNet34: 200); 0: all.
    std::int64_t candidates_per_class = 0;
    friend bool operator==(const DetectionHead&, const DetectionHead&) = default;
};

// A prior (default box, anchor) in [0, 1] coordinates of the input: centre and size.
struct Prior {
    float cx = 0;
    float cy = 0;
    float w = 0;
    float h = 0;
};
// TF's ssd_anchor_generator as ssd_mobilenet_v1_coco.config sets it (6 layers, scales 0.2..0.95, aspect ratios
// 1, 2, 1/2, 3, 1/3 plus the interpolated scale, 3 boxes on the lowest layer) for a square input of `image_side`:
// 1917 at 300, in the order of the model's outputs (cell row, cell column, box).
std::vector<Prior> ssd_mobilenet_priors(std::int64_t image_side);
// MLPerf's dboxes_R34_coco (1200x1200, maps 50 25 13 7 3 3, steps 24 48 92 171 400 400, scales 84..996,
// aspect ratios 2 and 3), clamped to [0, 1], in the order of the model's outputs (box, cell row, cell column):
// 15130.
std::vector<Prior> ssd_resnet34_priors();

// One batch's boxes decoded (the outputs in the model's order), those not above score_threshold dropped, in the
// input's pixels (`input`: the model's input size). Throws UserError when the outputs' shapes do not fit the coding.
std::vector<BoxCandidates> decode_boxes(const DetectionHead& head, std::span<const FloatTensor> outputs,
                                        ImageSize input, float score_threshold);

// What one batch's outputs became, by PipelineSteps::post: `top` (softmax_topk), `candidates` then, after
// suppress_boxes(), `detections` (ssd_boxes, yolo_boxes), `labels` (argmax); one entry per image.
struct BatchResults {
    std::vector<std::vector<ClassScore>> top;
    std::vector<BoxCandidates> candidates;
    std::vector<std::vector<Detection>> detections;
    std::vector<std::vector<std::int32_t>> labels;
};

// The pipeline's post-processing stage of a batch: everything but NMS.
BatchResults decode_outputs(const PipelineSteps& steps, const DetectionHead& head,
                            std::span<const FloatTensor> outputs);
// The NMS stage: each image's candidates to its detections (select_detections with the steps' thresholds).
void suppress_boxes(const PipelineSteps& steps, const DetectionHead& head, BatchResults& results);

}  // namespace inferbench::pipeline
