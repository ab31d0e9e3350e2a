// torchvision's NMS, replicated operation for operation (its CPU kernel's float arithmetic, its stable ordering and
// batched_nms' two ways of keeping classes apart), because "the same boxes as torchvision" is only checkable when
// the rounding is the same too.
#include "pipeline/nms.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench::pipeline {

namespace {

// torchvision switches from the offset trick to one NMS per class above this many coordinates on the CPU.
constexpr std::size_t kVanillaAboveCoordinates = 4000;

void check_lengths(std::size_t boxes, std::size_t scores, std::size_t classes) {
    if (boxes != scores || boxes != classes) {
        throw std::invalid_argument(
            fmt::format("nms: {} boxes, {} scores and {} classes; each box needs one of each", boxes, scores, classes));
    }
}

// The indices by score descending, equal scores in index order (torch.sort(stable=True, descending=True)).
std::vector<std::int64_t> order_by_score(std::span<const float> scores) {
    std::vector<std::int64_t> order(scores.size());
    std::iota(order.begin(), order.end(), std::int64_t{0});
    std::ranges::stable_sort(order, [&](std::int64_t a, std::int64_t b) {
        return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
    });
    return order;
}

// Greedy suppression in `order`, as torchvision's nms_kernel: IoU in float, compared with the threshold in double
// (the kernel's threshold is a double), > so that IoU equal to the threshold keeps the box.
std::vector<std::int64_t> suppress(std::span<const Box> boxes, std::span<const std::int64_t> order,
                                   double iou_threshold) {
    std::vector<float> areas(boxes.size());
    for (std::size_t i = 0; i < boxes.size(); ++i) areas[i] = (boxes[i].x2 - boxes[i].x1) * (boxes[i].y2 - boxes[i].y1);
    std::vector<char> suppressed(boxes.size(), 0);
    std::vector<std::int64_t> keep;
    for (std::size_t a = 0; a < order.size(); ++a) {
        const auto i = static_cast<std::size_t>(order[a]);
        if (suppressed[i] != 0) continue;
        keep.push_back(order[a]);
        const Box& bi = boxes[i];
        for (std::size_t b = a + 1; b < order.size(); ++b) {
            const auto j = static_cast<std::size_t>(order[b]);
            if (suppressed[j] != 0) continue;
            const Box& bj = boxes[j];
            const float w = std::max(0.0F, std::min(bi.x2, bj.x2) - std::max(bi.x1, bj.x1));
            const float h = std::max(0.0F, std::min(bi.y2, bj.y2) - std::max(bi.y1, bj.y1));
            const float inter = w * h;
            const float iou = inter / (areas[i] + areas[j] - inter);
            if (static_cast<double>(iou) > iou_threshold) suppressed[j] = 1;
        }
    }
    return keep;
}

// batched_nms for few boxes: every class's boxes moved by class * (largest coordinate + 1) so that no two classes
// overlap, then one NMS (the moved coordinates' rounding included).
std::vector<std::int64_t> nms_offset_classes(std::span<const Box> boxes, std::span<const float> scores,
                                             std::span<const std::int64_t> classes, double iou_threshold) {
    float largest = boxes.front().x1;
    for (const Box& b : boxes) largest = std::max({largest, b.x1, b.y1, b.x2, b.y2});
    std::vector<Box> moved(boxes.begin(), boxes.end());
    for (std::size_t i = 0; i < moved.size(); ++i) {
        const float offset = static_cast<float>(classes[i]) * (largest + 1.0F);
        moved[i] = {moved[i].x1 + offset, moved[i].y1 + offset, moved[i].x2 + offset, moved[i].y2 + offset};
    }
    return suppress(moved, order_by_score(scores), iou_threshold);
}

// batched_nms for many boxes: one NMS per class, the kept of all classes by score (ties in index order).
std::vector<std::int64_t> nms_per_class(std::span<const Box> boxes, std::span<const float> scores,
                                        std::span<const std::int64_t> classes, double iou_threshold) {
    std::vector<std::int64_t> by_class(boxes.size());
    std::iota(by_class.begin(), by_class.end(), std::int64_t{0});
    std::ranges::stable_sort(by_class, [&](std::int64_t a, std::int64_t b) {
        return classes[static_cast<std::size_t>(a)] < classes[static_cast<std::size_t>(b)];
    });
    std::vector<char> kept(boxes.size(), 0);
    std::vector<Box> class_boxes;
    std::vector<float> class_scores;
    for (std::size_t begin = 0; begin < by_class.size();) {
        std::size_t end = begin;
        const std::int64_t cls = classes[static_cast<std::size_t>(by_class[begin])];
        class_boxes.clear();
        class_scores.clear();
        for (; end < by_class.size() && classes[static_cast<std::size_t>(by_class[end])] == cls; ++end) {
            class_boxes.push_back(boxes[static_cast<std::size_t>(by_class[end])]);
            class_scores.push_back(scores[static_cast<std::size_t>(by_class[end])]);
        }
        for (const std::int64_t k : suppress(class_boxes, order_by_score(class_scores), iou_threshold)) {
            kept[static_cast<std::size_t>(by_class[begin + static_cast<std::size_t>(k)])] = 1;
        }
        begin = end;
    }
    std::vector<std::int64_t> keep;
    for (std::size_t i = 0; i < kept.size(); ++i) {
        if (kept[i] != 0) keep.push_back(static_cast<std::int64_t>(i));
    }
    std::ranges::stable_sort(keep, [&](std::int64_t a, std::int64_t b) {
        return scores[static_cast<std::size_t>(a)] > scores[static_cast<std::size_t>(b)];
    });
    return keep;
}

// The indices of each class's `limit` highest-scoring candidates (equal scores: lower index first), in index order.
std::vector<std::int64_t> best_per_class(const BoxCandidates& candidates, std::int64_t limit) {
    std::vector<std::int64_t> order = order_by_score(candidates.scores);
    std::vector<std::int64_t> taken;
    std::vector<std::pair<std::int64_t, std::int64_t>> counts;  // class, taken so far
    for (const std::int64_t i : order) {
        const std::int64_t cls = candidates.classes[static_cast<std::size_t>(i)];
        auto it = std::ranges::find(counts, cls, &std::pair<std::int64_t, std::int64_t>::first);
        if (it == counts.end()) it = counts.insert(counts.end(), {cls, 0});
        if (it->second < limit) {
            ++it->second;
            taken.push_back(i);
        }
    }
    std::ranges::sort(taken);
    return taken;
}

}  // namespace

std::vector<std::int64_t> nms(std::span<const Box> boxes, std::span<const float> scores, float iou_threshold) {
    check_lengths(boxes.size(), scores.size(), scores.size());
    return suppress(boxes, order_by_score(scores), static_cast<double>(iou_threshold));
}

std::vector<std::int64_t> batched_nms(std::span<const Box> boxes, std::span<const float> scores,
                                      std::span<const std::int64_t> classes, float iou_threshold) {
    check_lengths(boxes.size(), scores.size(), classes.size());
    if (boxes.empty()) return {};
    const auto threshold = static_cast<double>(iou_threshold);
    if (boxes.size() * 4 > kVanillaAboveCoordinates) return nms_per_class(boxes, scores, classes, threshold);
    return nms_offset_classes(boxes, scores, classes, threshold);
}

std::vector<Detection> select_detections(const BoxCandidates& candidates, float iou_threshold,
                                         std::int64_t max_detections, std::int64_t candidates_per_class) {
    check_lengths(candidates.boxes.size(), candidates.scores.size(), candidates.classes.size());
    BoxCandidates entering;
    const BoxCandidates* input = &candidates;
    if (candidates_per_class > 0) {
        for (const std::int64_t i : best_per_class(candidates, candidates_per_class)) {
            const auto k = static_cast<std::size_t>(i);
            entering.boxes.push_back(candidates.boxes[k]);
            entering.scores.push_back(candidates.scores[k]);
            entering.classes.push_back(candidates.classes[k]);
        }
        input = &entering;
    }
    std::vector<std::int64_t> keep = batched_nms(input->boxes, input->scores, input->classes, iou_threshold);
    if (max_detections > 0 && keep.size() > static_cast<std::size_t>(max_detections)) {
        keep.resize(static_cast<std::size_t>(max_detections));
    }
    std::vector<Detection> detections;
    detections.reserve(keep.size());
    for (const std::int64_t i : keep) {
        const auto k = static_cast<std::size_t>(i);
        detections.push_back({input->boxes[k], input->scores[k], input->classes[k]});
    }
    return detections;
}

}  // namespace inferbench::pipeline
