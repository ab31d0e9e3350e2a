// Softmax and top-k, per-pixel argmax, and a batch's post-processing by its pipeline's steps.
#include "pipeline/postprocess.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "backends/output_agreement.hpp"
#include "core/error.hpp"

namespace inferbench::pipeline {

namespace {

std::int64_t product(std::span<const std::int64_t> dims) {
    return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

void check_values(const FloatTensor& t, std::string_view what) {
    if (t.shape.empty() || product(t.shape) != static_cast<std::int64_t>(t.values.size()) || t.shape[0] < 0) {
        throw UserError(fmt::format("{}: an output of shape [{}] holds {} values", what, fmt::join(t.shape, ", "),
                                    t.values.size()));
    }
}

// The one output a classifier or a segmenter has; a model with several outputs: its first.
const FloatTensor& first_output(std::span<const FloatTensor> outputs, std::string_view step) {
    if (outputs.empty()) throw UserError(fmt::format("{}: the model gave no outputs", step));
    return outputs.front();
}

}  // namespace

std::vector<FloatTensor> float_tensors(std::span<const HostTensor> outputs, std::vector<std::vector<float>>& storage) {
    std::vector<FloatTensor> views;
    storage.resize(outputs.size());
    for (std::size_t i = 0; i < outputs.size(); ++i) {
        const HostTensor& t = outputs[i];
        const auto count = static_cast<std::size_t>(t.info.element_count());
        if (t.data.size() != count * size_of(t.info.dtype)) {
            throw UserError(fmt::format("output '{}' holds {} bytes, not the {} its shape needs", t.info.name,
                                        t.data.size(), count * size_of(t.info.dtype)));
        }
        if (t.info.dtype == DType::f32) {
            views.push_back({{reinterpret_cast<const float*>(t.data.data()), count}, t.info.shape});
            continue;
        }
        storage[i].resize(count);
        for (std::size_t k = 0; k < count; ++k) {
            storage[i][k] = static_cast<float>(element_as_double(t, static_cast<std::int64_t>(k)));
        }
        views.push_back({storage[i], t.info.shape});
    }
    return views;
}

std::vector<std::vector<ClassScore>> softmax_top_k(const FloatTensor& logits, std::int64_t k) {
    check_values(logits, "softmax");
    const bool trailing_ones = std::all_of(logits.shape.begin() + std::min<std::ptrdiff_t>(2, std::ssize(logits.shape)),
                                           logits.shape.end(), [](std::int64_t d) { return d == 1; });
    if (logits.shape.size() < 2 || !trailing_ones || logits.shape[1] <= 0) {
        throw UserError(fmt::format("softmax_topk needs logits [batch, classes]; the model's output is [{}]",
                                    fmt::join(logits.shape, ", ")));
    }
    if (k <= 0) throw UserError(fmt::format("top_k {} is not positive", k));
    const auto classes = static_cast<std::size_t>(logits.shape[1]);
    const auto take = std::min(static_cast<std::size_t>(k), classes);
    std::vector<std::vector<ClassScore>> images(static_cast<std::size_t>(logits.shape[0]));
    std::vector<std::int64_t> order(classes);
    for (std::size_t b = 0; b < images.size(); ++b) {
        const std::span<const float> row = logits.values.subspan(b * classes, classes);
        const float largest = *std::ranges::max_element(row);
        double sum = 0;
        for (const float v : row) sum += std::exp(static_cast<double>(v - largest));
        // Ranked by logit, which the softmax keeps in order, so that probabilities that round equal keep theirs.
        std::iota(order.begin(), order.end(), std::int64_t{0});
        std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(take), order.end(),
                          [&](std::int64_t a, std::int64_t c) {
                              const float va = row[static_cast<std::size_t>(a)];
                              const float vc = row[static_cast<std::size_t>(c)];
                              return va > vc || (va == vc && a < c);
                          });
        for (std::size_t i = 0; i < take; ++i) {
            const float v = row[static_cast<std::size_t>(order[i])];
            images[b].push_back({order[i], static_cast<float>(std::exp(static_cast<double>(v - largest)) / sum)});
        }
    }
    return images;
}

std::vector<std::vector<std::int32_t>> argmax_classes(const FloatTensor& scores) {
    check_values(scores, "argmax");
    if (scores.shape.size() < 3 || scores.shape[1] <= 0) {
        throw UserError(fmt::format("argmax needs scores [batch, classes, height, width]; the model's output is [{}]",
                                    fmt::join(scores.shape, ", ")));
    }
    const auto classes = static_cast<std::size_t>(scores.shape[1]);
    const auto positions = static_cast<std::size_t>(product(std::span(scores.shape).subspan(2)));
    std::vector<std::vector<std::int32_t>> images(static_cast<std::size_t>(scores.shape[0]));
    std::vector<float> best(positions);
    for (std::size_t b = 0; b < images.size(); ++b) {
        const float* image = &scores.values[b * classes * positions];
        std::vector<std::int32_t>& labels = images[b];
        labels.assign(positions, 0);
        std::copy_n(image, positions, best.begin());
        // Class planes in order, a later class taking a position only when strictly larger: the first of equals.
        for (std::size_t c = 1; c < classes; ++c) {
            const float* plane = image + c * positions;
            for (std::size_t p = 0; p < positions; ++p) {
                if (plane[p] > best[p]) {
                    best[p] = plane[p];
                    labels[p] = static_cast<std::int32_t>(c);
                }
            }
        }
    }
    return images;
}

BatchResults decode_outputs(const PipelineSteps& steps, const DetectionHead& head,
                            std::span<const FloatTensor> outputs) {
    BatchResults results;
    switch (steps.post) {
        case PostProcess::none:
            break;
        case PostProcess::softmax_topk:
            results.top = softmax_top_k(first_output(outputs, "softmax_topk"), steps.top_k);
            break;
        case PostProcess::argmax:
            results.labels = argmax_classes(first_output(outputs, "argmax"));
            break;
        case PostProcess::ssd_boxes:
        case PostProcess::yolo_boxes:
            results.candidates = decode_boxes(head, outputs, steps.input_size, steps.score_threshold);
            break;
    }
    return results;
}

void suppress_boxes(const PipelineSteps& steps, const DetectionHead& head, BatchResults& results) {
    results.detections.clear();
    results.detections.reserve(results.candidates.size());
    for (const BoxCandidates& image : results.candidates) {
        results.detections.push_back(
            select_detections(image, steps.iou_threshold, steps.max_detections, head.candidates_per_class));
    }
}

}  // namespace inferbench::pipeline
