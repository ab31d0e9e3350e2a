// The GPU kernels' per-element arithmetic (pipeline/resample_math.hpp), run here on the host exactly as the kernels
// run it (the same functions over every element, the same NMS mask and greedy pass), against the CPU stages:
// resize_image + normalize_into byte for byte, batched_nms index for index, decode_boxes' SSD candidates value for
// value. What only a GPU can show (the kernels' launches, nvJPEG) scripts/gpu/pipeline_stages.sh checks there.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "pipeline/gpu_stages.hpp"
#include "pipeline/nms.hpp"
#include "pipeline/postprocess.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/resample_math.hpp"
#include "pipeline/resize.hpp"

namespace inferbench::pipeline {
namespace {

RgbImage random_image(ImageSize size, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> value(0, 255);
    RgbImage image;
    image.reshape(size);
    // Smooth ramps plus noise: neighbouring pixels related, as in a photo, and every value reached.
    for (std::int64_t y = 0; y < size.height; ++y)
        for (std::int64_t x = 0; x < size.width; ++x)
            for (std::int64_t c = 0; c < 3; ++c)
                image.pixels[static_cast<std::size_t>((y * size.width + x) * 3 + c)] =
                    static_cast<std::uint8_t>((x * (c + 1) + y * 3 + value(rng) / 8) % 256);
    return image;
}

ResampleAxis host_axis(std::int64_t placed_begin, const ResizeWeights& w) {
    ResampleAxis axis;
    axis.placed_begin = static_cast<std::int32_t>(placed_begin);
    axis.placed_count = static_cast<std::int32_t>(w.start.size());
    axis.max_taps = static_cast<std::int32_t>(w.max_taps);
    axis.start = w.start.data();
    axis.taps = w.taps.data();
    axis.weights = w.weights.data();
    return axis;
}

// What the two kernels compute for one image's slot, element by element on the host.
std::vector<std::byte> emulate_gpu_slot(const RgbImage& image, const PipelineSteps& steps) {
    const GpuImagePlan plan = gpu_image_plan(steps, image.size());
    const std::vector<std::byte> table = normalization_table(steps);
    std::vector<std::uint8_t> rows(static_cast<std::size_t>(plan.row_count * plan.geometry.kept.width * 3));
    ResampleJob job;
    job.source = image.pixels.data();
    job.source_width = static_cast<std::int32_t>(image.width);
    job.first_row = static_cast<std::int32_t>(plan.first_row);
    job.row_count = static_cast<std::int32_t>(plan.row_count);
    job.x = host_axis(plan.geometry.pad_x, plan.x);
    job.y = host_axis(plan.geometry.pad_y, plan.y);
    job.rows = rows.data();
    for (std::size_t i = 0; i < rows.size(); ++i) horizontal_element(job, static_cast<std::int64_t>(i));
    ResampleOutput out;
    out.width = static_cast<std::int32_t>(steps.input_size.width);
    out.height = static_cast<std::int32_t>(steps.input_size.height);
    out.nchw = steps.layout == TensorLayout::nchw;
    out.bgr = steps.bgr;
    out.element_bytes = static_cast<std::int32_t>(table.size() / 768);
    out.fill = static_cast<std::uint8_t>(std::clamp(std::lround(steps.letterbox_fill), 0L, 255L));
    out.table = reinterpret_cast<const std::uint8_t*>(table.data());
    std::vector<std::byte> slot(image_slot_bytes(steps));
    const std::int64_t elements = steps.input_size.width * steps.input_size.height * 3;
    for (std::int64_t i = 0; i < elements; ++i)
        output_element(job, out, i, reinterpret_cast<std::uint8_t*>(slot.data()));
    return slot;
}

std::vector<std::byte> cpu_slot(const RgbImage& image, const PipelineSteps& steps) {
    RgbImage resized;
    ResizeScratch scratch;
    resize_image(image, steps, resized, scratch);
    std::vector<std::byte> slot(image_slot_bytes(steps));
    normalize_into(resized, steps, slot, 0);
    return slot;
}

struct NamedSteps {
    const char* name;
    PipelineSteps steps;
};

std::vector<NamedSteps> preprocess_cases() {
    PipelineSteps imagenet;
    imagenet.resize = ResizeRule::shorter_side_crop;
    imagenet.input_size = {224, 224};
    imagenet.resize_shorter = 256;
    imagenet.mean = {123.675F, 116.28F, 103.53F};
    imagenet.std = {58.395F, 57.12F, 57.375F};
    PipelineSteps yolo;
    yolo.resize = ResizeRule::letterbox;
    yolo.input_size = {320, 320};
    yolo.std = {255.0F, 255.0F, 255.0F};
    yolo.bgr = true;
    PipelineSteps ssd;
    ssd.resize = ResizeRule::plain;
    ssd.input_size = {300, 300};
    ssd.layout = TensorLayout::nhwc;
    ssd.pixel_type = PixelType::u8;
    PipelineSteps half = imagenet;
    half.pixel_type = PixelType::f16;
    half.layout = TensorLayout::nhwc;
    return {{"imagenet f32 nchw", imagenet},
            {"letterbox f32 bgr", yolo},
            {"plain u8 nhwc", ssd},
            {"imagenet f16 nhwc", half}};
}

TEST(GpuArithmetic, ResizeAndNormaliseGiveTheCpusBytes) {
    const ImageSize sizes[] = {{640, 480}, {333, 250}, {301, 1000}, {120, 90}, {224, 224}};
    std::uint32_t seed = 1;
    for (const auto& c : preprocess_cases()) {
        for (const ImageSize size : sizes) {
            const RgbImage image = random_image(size, seed++);
            EXPECT_EQ(emulate_gpu_slot(image, c.steps), cpu_slot(image, c.steps))
                << c.name << " from " << size.width << "x" << size.height;
        }
    }
}

TEST(GpuArithmetic, NormalizationTableHoldsEachChannelsValues) {
    PipelineSteps steps;
    steps.mean = {123.675F, 116.28F, 103.53F};
    steps.std = {58.395F, 57.12F, 57.375F};
    steps.bgr = true;
    const auto table = normalization_table(steps);
    ASSERT_EQ(table.size(), 3U * 256U * 4U);
    float blue_255 = 0;
    float red_0 = 0;
    std::memcpy(&blue_255, table.data() + (0 * 256 + 255) * 4, 4);  // output channel 0 is blue (bgr)
    std::memcpy(&red_0, table.data() + (2 * 256 + 0) * 4, 4);
    EXPECT_FLOAT_EQ(blue_255, (255.0F - 103.53F) / 57.375F);
    EXPECT_FLOAT_EQ(red_0, (0.0F - 123.675F) / 58.395F);
}

// The kernels' NMS on the host: keys sorted descending, the class offset for few candidates, the mask, the scan.
std::vector<std::int64_t> emulate_gpu_nms(const std::vector<float>& boxes, const std::vector<float>& scores,
                                          const std::vector<std::int32_t>& labels, float iou_threshold,
                                          int max_detections) {
    const auto n = static_cast<std::int64_t>(scores.size());
    std::vector<std::pair<std::uint64_t, std::int32_t>> keyed;
    for (std::int64_t i = 0; i < n; ++i)
        keyed.emplace_back(nms_sort_key(scores[static_cast<std::size_t>(i)], static_cast<std::uint32_t>(i)),
                           static_cast<std::int32_t>(i));
    std::sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    float unit = 0.0F;
    if (n <= kOffsetTrickMaxCandidates && n > 0) unit = *std::max_element(boxes.begin(), boxes.end()) + 1.0F;
    std::vector<char> removed(static_cast<std::size_t>(n), 0);
    std::vector<std::int64_t> kept;
    for (std::int64_t r = 0; r < n && static_cast<int>(kept.size()) < max_detections; ++r) {
        if (removed[static_cast<std::size_t>(r)]) continue;
        const std::int32_t earlier = keyed[static_cast<std::size_t>(r)].second;
        kept.push_back(earlier);
        for (std::int64_t later_rank = r + 1; later_rank < n; ++later_rank) {
            const std::int32_t later = keyed[static_cast<std::size_t>(later_rank)].second;
            if (suppresses(&boxes[static_cast<std::size_t>(earlier) * 4], labels[static_cast<std::size_t>(earlier)],
                           &boxes[static_cast<std::size_t>(later) * 4], labels[static_cast<std::size_t>(later)], unit,
                           iou_threshold))
                removed[static_cast<std::size_t>(later_rank)] = 1;
        }
    }
    return kept;
}

struct Candidates {
    std::vector<float> boxes;
    std::vector<float> scores;
    std::vector<std::int32_t> labels;
};

Candidates make_candidates(const std::string& kind, int n, int classes, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> coord(0.0F, 500.0F);
    std::uniform_real_distribution<float> side(1.0F, 120.0F);
    std::uniform_real_distribution<float> unit(0.0F, 1.0F);
    std::uniform_int_distribution<int> label(0, classes - 1);
    Candidates c;
    for (int i = 0; i < n; ++i) {
        float x = coord(rng);
        float y = coord(rng);
        float w = side(rng);
        const float h = side(rng);
        if (kind == "all_overlapping") {
            x = 100.0F + unit(rng) * 5.0F;
            y = 100.0F + unit(rng) * 5.0F;
        }
        if (kind == "zero_area" && i % 2 == 0) w = 0.0F;
        c.boxes.insert(c.boxes.end(), {x, y, x + w, y + h});
        c.scores.push_back(kind == "ties" ? 0.25F * static_cast<float>(1 + i % 3) : unit(rng));
        c.labels.push_back(label(rng));
    }
    return c;
}

std::vector<std::int64_t> cpu_nms(const Candidates& c, float iou_threshold, int max_detections) {
    std::vector<Box> boxes;
    for (std::size_t i = 0; i < c.scores.size(); ++i)
        boxes.push_back({c.boxes[i * 4], c.boxes[i * 4 + 1], c.boxes[i * 4 + 2], c.boxes[i * 4 + 3]});
    const std::vector<std::int64_t> classes(c.labels.begin(), c.labels.end());
    auto keep = batched_nms(boxes, c.scores, classes, iou_threshold);
    if (static_cast<int>(keep.size()) > max_detections) keep.resize(static_cast<std::size_t>(max_detections));
    return keep;
}

TEST(GpuArithmetic, NmsKeepsWhatBatchedNmsKeepsInItsOrder) {
    struct Case {
        const char* kind;
        int n;
        int classes;
        float iou;
        int max_detections;
    };
    // Below and above 1000 candidates: batched_nms' class offset and its per-class NMS.
    const Case cases[] = {
        {"random", 300, 1, 0.5F, 300},    {"random", 900, 20, 0.45F, 900},        {"ties", 400, 3, 0.5F, 400},
        {"zero_area", 200, 2, 0.5F, 200}, {"all_overlapping", 500, 4, 0.3F, 500}, {"random", 2500, 10, 0.5F, 2500},
        {"ties", 1500, 5, 0.6F, 100},     {"zero_area", 1200, 1, 0.5F, 1200}};
    std::uint32_t seed = 11;
    for (const Case& k : cases) {
        const Candidates c = make_candidates(k.kind, k.n, k.classes, seed++);
        EXPECT_EQ(emulate_gpu_nms(c.boxes, c.scores, c.labels, k.iou, k.max_detections),
                  cpu_nms(c, k.iou, k.max_detections))
            << k.kind << " " << k.n << " candidates, " << k.classes << " classes";
    }
}

struct HostExp {
    float operator()(float v) const { return std::exp(v); }
};

// The kernel's SSD candidates on the host, in candidate id order (anchor, then class), as decode_boxes lists them.
BoxCandidates emulate_gpu_ssd(BoxCoding coding, std::span<const Prior> priors, std::int64_t classes,
                              const std::vector<float>& locs, const std::vector<float>& logits, ImageSize input,
                              float threshold) {
    const bool tf = coding == BoxCoding::ssd_tf_anchors;
    const auto anchors = static_cast<std::int64_t>(priors.size());
    BoxCandidates out;
    for (std::int64_t a = 0; a < anchors; ++a) {
        float code[4];
        for (std::int64_t k = 0; k < 4; ++k)
            code[k] = tf ? locs[static_cast<std::size_t>(a * 4 + k)] : locs[static_cast<std::size_t>(k * anchors + a)];
        const Prior& p = priors[static_cast<std::size_t>(a)];
        const float prior[4] = {p.cx, p.cy, p.w, p.h};
        float box[4];
        const auto w = static_cast<float>(input.width);
        const auto h = static_cast<float>(input.height);
        if (tf)
            decode_ssd_tf_box(code, prior, w, h, HostExp{}, box);
        else
            decode_ssd_r34_box(code, prior, w, h, HostExp{}, box);
        const auto logit = [&](std::int64_t c) {
            return logits[static_cast<std::size_t>(tf ? a * classes + c : c * anchors + a)];
        };
        float largest = 0.0F;
        float sum = 0.0F;
        if (!tf) {
            largest = logit(0);
            for (std::int64_t c = 1; c < classes; ++c) largest = std::max(largest, logit(c));
            for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(logit(c) - largest);
        }
        for (std::int64_t c = 1; c < classes; ++c) {
            const float score = tf ? 1.0F / (1.0F + std::exp(-logit(c))) : std::exp(logit(c) - largest) / sum;
            if (!(score > threshold)) continue;
            out.boxes.push_back({box[0], box[1], box[2], box[3]});
            out.scores.push_back(score);
            out.classes.push_back(c);
        }
    }
    return out;
}

void expect_same_candidates(const BoxCandidates& gpu, const BoxCandidates& cpu, const char* what) {
    ASSERT_EQ(gpu.size(), cpu.size()) << what;
    ASSERT_GT(cpu.size(), 0U) << what;
    EXPECT_EQ(gpu.classes, cpu.classes) << what;
    EXPECT_EQ(gpu.scores, cpu.scores) << what;
    EXPECT_EQ(gpu.boxes, cpu.boxes) << what;
}

TEST(GpuArithmetic, SsdCandidatesAreDecodeBoxesOnes) {
    std::mt19937 rng(5);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    {
        const auto priors = ssd_mobilenet_priors(300);
        const std::int64_t classes = 91;
        std::vector<float> locs(priors.size() * 4);
        std::vector<float> logits(priors.size() * classes);
        for (float& v : locs) v = normal(rng);
        for (float& v : logits) v = normal(rng) * 2.0F - 3.0F;
        const FloatTensor outputs[] = {{locs, {1, static_cast<std::int64_t>(priors.size()), 4}},
                                       {logits, {1, static_cast<std::int64_t>(priors.size()), classes}}};
        const auto cpu = decode_boxes({BoxCoding::ssd_tf_anchors, 0}, outputs, {300, 300}, 0.3F);
        expect_same_candidates(
            emulate_gpu_ssd(BoxCoding::ssd_tf_anchors, priors, classes, locs, logits, {300, 300}, 0.3F), cpu.at(0),
            "ssd-mobilenet");
    }
    {
        const auto priors = ssd_resnet34_priors();
        const std::int64_t classes = 81;
        std::vector<float> locs(priors.size() * 4);
        std::vector<float> confs(priors.size() * classes);
        for (float& v : locs) v = normal(rng);
        for (float& v : confs) v = normal(rng) * 3.0F;
        const FloatTensor outputs[] = {{locs, {1, 4, static_cast<std::int64_t>(priors.size())}},
                                       {confs, {1, classes, static_cast<std::int64_t>(priors.size())}}};
        const auto cpu = decode_boxes({BoxCoding::ssd_r34_dboxes, 0}, outputs, {1200, 1200}, 0.05F);
        expect_same_candidates(
            emulate_gpu_ssd(BoxCoding::ssd_r34_dboxes, priors, classes, locs, confs, {1200, 1200}, 0.05F), cpu.at(0),
            "ssd-resnet34");
    }
}

TEST(GpuArithmetic, BoxIouAndKeysAsTorchvision) {
    const float a[4] = {0, 0, 10, 10};
    const float b[4] = {5, 0, 15, 10};
    EXPECT_FLOAT_EQ(box_iou(a, b), 50.0F / 150.0F);
    const float point[4] = {3, 3, 3, 3};
    EXPECT_TRUE(std::isnan(box_iou(point, point)));
    EXPECT_FALSE(suppresses(point, 0, point, 0, 0.0F, 0.5F));  // 0/0 suppresses nothing
    EXPECT_FALSE(suppresses(a, 0, b, 1, 0.0F, 0.1F));          // another class
    EXPECT_GT(nms_sort_key(0.9F, 5), nms_sort_key(0.8F, 0));
    EXPECT_GT(nms_sort_key(0.5F, 1), nms_sort_key(0.5F, 2));  // a tie: the lower index first
    EXPECT_GT(nms_sort_key(0.0F, 9), nms_sort_key(-0.1F, 0));
}

}  // namespace
}  // namespace inferbench::pipeline
