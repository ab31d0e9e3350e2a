// What post-processing costs on this CPU, one thread: each zoo detector's box decoding and NMS per image with its
// published thresholds (pipeline/model_pipelines), on seeded random outputs of the model's shapes (box codes N(0, 1),
// class and objectness logits N(-5, 2), an SSD's background 10 higher: a few to a few thousand candidates an image,
// not a real picture's); NMS alone at fixed candidate counts (random boxes in a 640x640 image, 80 classes); softmax
// + top-5 of 1000 classes. Median of the runs, ms per image; the candidates entering NMS are printed beside, as
// NMS's cost follows them.
//   build/release/bench/postprocess_cost
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "pipeline/model_pipelines.hpp"
#include "pipeline/nms.hpp"
#include "pipeline/postprocess.hpp"

namespace {

using namespace inferbench;
using namespace inferbench::pipeline;

// The median of `runs` runs of `step`, in ms.
double median_ms(int runs, const std::function<void()>& step) {
    std::vector<double> times;
    for (int i = 0; i < runs; ++i) {
        const auto start = std::chrono::steady_clock::now();
        step();
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::ranges::sort(times);
    return times[times.size() / 2];
}

struct Tensor {
    std::vector<std::int64_t> shape;
    std::vector<float> values;
};

// Seeded values of `shape`: logits where `is_logit(index)`, box codes elsewhere.
Tensor random_tensor(std::vector<std::int64_t> shape, std::mt19937& rng,
                     const std::function<bool(std::size_t)>& is_logit) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    Tensor t{std::move(shape), std::vector<float>(static_cast<std::size_t>(n))};
    std::normal_distribution<float> code(0.0F, 1.0F);
    std::normal_distribution<float> logit(-5.0F, 2.0F);
    for (std::size_t i = 0; i < t.values.size(); ++i) t.values[i] = is_logit(i) ? logit(rng) : code(rng);
    return t;
}

struct Detector {
    std::string model;
    std::vector<std::vector<std::int64_t>> shapes;  // batch 1
};

std::vector<Tensor> detector_outputs(const Detector& d, BoxCoding coding, std::int64_t batch, std::mt19937& rng) {
    std::vector<Tensor> outputs;
    for (std::size_t o = 0; o < d.shapes.size(); ++o) {
        std::vector<std::int64_t> shape = d.shapes[o];
        shape[0] = batch;
        const bool yolo = coding == BoxCoding::yolov3 || coding == BoxCoding::yolov5;
        const std::int64_t plane = yolo ? shape[2] * shape[3] : 1;
        // SSD: the second output holds the logits; YOLO: channels 4.. of each anchor's 85.
        const bool ssd_logits = !yolo && o == 1;
        outputs.push_back(random_tensor(shape, rng, [&](std::size_t i) {
            if (!yolo) return ssd_logits;
            return (static_cast<std::int64_t>(i) / plane) % 85 >= 4;
        }));
    }
    if (coding == BoxCoding::ssd_tf_anchors || coding == BoxCoding::ssd_r34_dboxes) {
        // A detector's background class wins almost everywhere: 10 more on its logit (without it, R34's softmax
        // over 81 equal random logits would put tens of thousands of boxes above 0.05).
        Tensor& logits = outputs[1];
        const bool classes_last = coding == BoxCoding::ssd_tf_anchors;
        const std::int64_t classes = classes_last ? logits.shape[2] : logits.shape[1];
        const std::int64_t boxes = classes_last ? logits.shape[1] : logits.shape[2];
        for (std::int64_t b = 0; b < batch; ++b) {
            for (std::int64_t a = 0; a < boxes; ++a) {
                const std::int64_t i = classes_last ? (b * boxes + a) * classes : b * classes * boxes + a;
                logits.values[static_cast<std::size_t>(i)] += 10.0F;
            }
        }
    }
    return outputs;
}

void detectors() {
    const std::vector<Detector> list = {
        {"ssd-mobilenet", {{1, 1917, 4}, {1, 1917, 91}}},
        {"ssd-resnet34", {{1, 4, 15130}, {1, 81, 15130}}},
        {"yolov3", {{1, 255, 13, 13}, {1, 255, 26, 26}, {1, 255, 52, 52}}},
        {"yolov5s", {{1, 255, 80, 80}, {1, 255, 40, 40}, {1, 255, 20, 20}}},
    };
    std::puts("| model | batch | candidates / image | decode ms / image | NMS ms / image | detections / image |");
    std::puts("|---|---|---|---|---|---|");
    std::mt19937 rng(42);
    for (const Detector& d : list) {
        const ModelPipeline p = *zoo_pipeline(d.model);
        for (const std::int64_t batch : {1, 8}) {
            const std::vector<Tensor> outputs = detector_outputs(d, p.head.coding, batch, rng);
            std::vector<FloatTensor> views;
            for (const Tensor& t : outputs) views.push_back({t.values, t.shape});
            BatchResults results;
            const double decode = median_ms(9, [&] { results = decode_outputs(p.steps, p.head, views); });
            std::size_t candidates = 0;
            for (const BoxCandidates& c : results.candidates) candidates += c.size();
            BatchResults suppressed = results;
            const double nms = median_ms(9, [&] {
                suppressed = results;
                suppress_boxes(p.steps, p.head, suppressed);
            });
            std::size_t kept = 0;
            for (const auto& image : suppressed.detections) kept += image.size();
            const auto per_image = static_cast<double>(batch);
            fmt::print("| {} | {} | {:.0f} | {:.3f} | {:.3f} | {:.1f} |\n", d.model, batch,
                       static_cast<double>(candidates) / per_image, decode / per_image, nms / per_image,
                       static_cast<double>(kept) / per_image);
        }
    }
}

void nms_alone() {
    std::puts("\n| candidates | classes | IoU | batched_nms ms |");
    std::puts("|---|---|---|---|");
    std::mt19937 rng(7);
    for (const std::size_t n : {100U, 1000U, 5000U, 20000U}) {
        BoxCandidates c;
        std::uniform_real_distribution<float> pos(0.0F, 640.0F);
        std::uniform_real_distribution<float> side(4.0F, 160.0F);
        std::uniform_real_distribution<float> score(0.0F, 1.0F);
        std::uniform_int_distribution<std::int64_t> cls(0, 79);
        for (std::size_t i = 0; i < n; ++i) {
            const float x = pos(rng);
            const float y = pos(rng);
            c.boxes.push_back({x, y, x + side(rng), y + side(rng)});
            c.scores.push_back(score(rng));
            c.classes.push_back(cls(rng));
        }
        const double ms = median_ms(5, [&] { batched_nms(c.boxes, c.scores, c.classes, 0.45F); });
        fmt::print("| {} | 80 | 0.45 | {:.3f} |\n", n, ms);
    }
}

void classifier() {
    std::mt19937 rng(3);
    const Tensor logits = random_tensor({32, 1000}, rng, [](std::size_t) { return false; });
    const double ms = median_ms(21, [&] { softmax_top_k({logits.values, logits.shape}, 5); });
    fmt::print("\nsoftmax + top-5 of 1000 classes: {:.4f} ms / image (batch 32)\n", ms / 32.0);
}

}  // namespace

int main() {
    detectors();
    nms_alone();
    classifier();
    return 0;
}
