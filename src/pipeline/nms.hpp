// Non-maximum suppression with torchvision's semantics (torchvision.ops.nms and batched_nms): the same kept boxes in
// the same order, ties and zero-area boxes included, so that a detector's results here and in PyTorch agree.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace inferbench::pipeline {

// A box's corners in the model input's pixels: (x1, y1) top left, (x2, y2) bottom right.
struct Box {
    float x1 = 0;
    float y1 = 0;
    float x2 = 0;
    float y2 = 0;
    friend bool operator==(const Box&, const Box&) = default;
};

// One detected object of one image.
struct Detection {
    Box box;
    float score = 0;
    std::int64_t class_id = 0;  // the model's class index (see DetectionHead for each head's numbering)
    friend bool operator==(const Detection&, const Detection&) = default;
};

// One image's decoded boxes before NMS (those scoring above the score threshold), one class per box: an anchor that
// scores above the threshold for two classes is two candidates.
struct BoxCandidates {
    std::vector<Box> boxes;
    std::vector<float> scores;
    std::vector<std::int64_t> classes;
    std::size_t size() const { return boxes.size(); }
};

// torchvision.ops.nms: the indices of the boxes kept, by score descending (equal scores: lower index first); a box
// is dropped when its IoU with a kept box of higher rank is above iou_threshold. IoU is intersection over union in
// float arithmetic as torchvision computes it, so two zero-area boxes (0/0) never suppress each other.
// `boxes` and `scores` have the same length.
std::vector<std::int64_t> nms(std::span<const Box> boxes, std::span<const float> scores, float iou_threshold);

// torchvision.ops.batched_nms: NMS within each class separately, the kept indices of all classes by score
// descending (equal scores: lower index first).
std::vector<std::int64_t> batched_nms(std::span<const Box> boxes, std::span<const float> scores,
                                      std::span<const std::int64_t> classes, float iou_threshold);

// A detector's last step for one image: at most candidates_per_class highest-scoring boxes of each class enter
// (0: all; MLPerf's SSD-ResNet34 takes 200), then batched_nms, then the first max_detections kept (0: all).
std::vector<Detection> select_detections(const BoxCandidates& candidates, float iou_threshold,
                                         std::int64_t max_detections, std::int64_t candidates_per_class = 0);

}  // namespace inferbench::pipeline
