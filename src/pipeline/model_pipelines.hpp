// Each zoo image model's pipeline, defined once from its published pre- and post-processing (the resize rule, the
// normalisation, the layout, what its outputs become and the thresholds), the reason a model has none, and a user's
// model's pipeline from the plan's steps, checked against the model's declared input and outputs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pipeline.hpp"
#include "models/onnx_reader.hpp"
#include "pipeline/postprocess.hpp"

namespace inferbench::pipeline {

struct ModelPipeline {
    PipelineSteps steps;
    DetectionHead head;  // ssd_boxes and yolo_boxes: how the boxes are coded
    std::string source;  // the published pre/post-processing it follows
};

// A zoo model's pipeline; nothing for a zoo model without an image pipeline and for names the zoo does not know.
std::optional<ModelPipeline> zoo_pipeline(std::string_view model);

// Why a model (a zoo model or a zoo decoder) has no image pipeline ("bert takes token ids, not images"); empty for
// a model that has one and for names that are not the zoo's.
std::string no_pipeline_reason(std::string_view model);

// A user's model: the plan's steps, checked against its graph's declared input and outputs (one image input of
// rank 4 whose channels and sides agree with the layout and input_size where fixed; outputs of the shapes the post
// step needs), the box coding told by the outputs' shapes (ssd_boxes: [b, n, 4] + [b, n, classes] is TF's SSD,
// [b, 4, n] + [b, classes, n] MLPerf's SSD-ResNet34; yolo_boxes: YOLOv3's). Throws UserError, one line naming the
// model, the tensor and what disagrees, when they do not fit.
ModelPipeline user_pipeline(std::string_view model, const PipelineSteps& steps,
                            const models::onnx::OnnxGraphSignature& graph);

// The zoo models that have an image pipeline, in the zoo's order.
std::vector<std::string> zoo_pipeline_models();

}  // namespace inferbench::pipeline
