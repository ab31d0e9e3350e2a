// Box decoding against a NumPy reference written here from the papers' and the published code's formulas (SSD's
// anchors and box coder as TF object detection and MLPerf's ssd_r34.py define them, YOLOv3's and YOLOv5's grid
// decoding), on random outputs of the zoo models' shapes; and the priors' published counts and first boxes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "pipeline/postprocess.hpp"
#include "pipeline/python_reference.hpp"

namespace inferbench::pipeline {
namespace {

struct Output {
    std::vector<std::int64_t> shape;
    std::vector<float> values;
    FloatTensor view() const { return {values, shape}; }
};

// Normal values of the given mean and spread, seeded.
Output random_output(std::vector<std::int64_t> shape, float mean, float spread, std::uint32_t seed) {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    Output o{std::move(shape), std::vector<float>(static_cast<std::size_t>(n))};
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(mean, spread);
    for (float& v : o.values) v = normal(rng);
    return o;
}

struct Candidate {
    std::int64_t image;
    std::int64_t class_id;
    float score;
    Box box;
};

constexpr const char* kNumpyDecoders = R"(
import sys, numpy as np
words = sys.stdin.read().split()
coding, path, W, H, thr = words[0], words[1], int(words[2]), int(words[3]), float(words[4])
shapes = [tuple(int(d) for d in s.split('x')) for s in words[5:]]
flat = np.fromfile(path, dtype='<f4').astype(np.float64)
arrays, at = [], 0
for s in shapes:
    n = int(np.prod(s)); arrays.append(flat[at:at + n].reshape(s)); at += n
sig = lambda x: 1.0 / (1.0 + np.exp(-x))
out = []
def emit(b, c, score, x1, y1, x2, y2):
    out.append('%d %d %.9g %.9g %.9g %.9g %.9g' % (b, c, score, x1, y1, x2, y2))
def corners(cx, cy, w, h):
    return cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2

if coding == 'ssd_tf_anchors':
    # Liu et al.: s_k = s_min + (s_max - s_min)(k - 1)/(m - 1), widths s*sqrt(a), heights s/sqrt(a), plus
    # sqrt(s_k s_k+1) for a = 1; TF's lowest layer (0.1, 1), (s, 2), (s, 1/2); centres (i + 0.5)/|f_k|.
    maps, n = [], W
    for _ in range(4): n = (n + 1) // 2
    for _ in range(6): maps.append(n); n = (n + 1) // 2
    s = [0.2 + (0.95 - 0.2) * k / 5 for k in range(6)] + [1.0]
    anchors = []
    for k, m in enumerate(maps):
        kinds = [(0.1, 1.0), (s[0], 2.0), (s[0], 0.5)] if k == 0 else \
            [(s[k], a) for a in (1.0, 2.0, 0.5, 3.0, 0.3333)] + [(np.sqrt(s[k] * s[k + 1]), 1.0)]
        for i in range(m):
            for j in range(m):
                for sc, a in kinds:
                    anchors.append(((j + 0.5) / m, (i + 0.5) / m, sc * np.sqrt(a), sc / np.sqrt(a)))
    A = np.array(anchors)
    codes, logits = arrays
    cy = codes[..., 0] / 10 * A[:, 3] + A[:, 1]
    cx = codes[..., 1] / 10 * A[:, 2] + A[:, 0]
    h = np.exp(codes[..., 2] / 5) * A[:, 3]
    w = np.exp(codes[..., 3] / 5) * A[:, 2]
    x1, y1, x2, y2 = corners(cx * W, cy * H, w * W, h * H)
    p = sig(logits)
    for b, a, c in zip(*np.nonzero(p[:, :, 1:] > thr)):
        emit(b, c + 1, p[b, a, c + 1], x1[b, a], y1[b, a], x2[b, a], y2[b, a])
elif coding == 'ssd_r34_dboxes':
    feat, steps = [50, 25, 13, 7, 3, 3], [24, 48, 92, 171, 400, 400]
    scales, ratios = [84, 180, 324, 492, 660, 828, 996], [[2], [2, 3], [2, 3], [2, 3], [2], [2]]
    boxes = []
    for k, f in enumerate(feat):
        fk = 1200 / steps[k]
        s1, s2 = scales[k] / 1200, scales[k + 1] / 1200
        sizes = [(s1, s1), (np.sqrt(s1 * s2),) * 2]
        for a in ratios[k]:
            sizes += [(s1 * np.sqrt(a), s1 / np.sqrt(a)), (s1 / np.sqrt(a), s1 * np.sqrt(a))]
        for w, h in sizes:
            for i in range(f):
                for j in range(f):
                    boxes.append(((j + 0.5) / fk, (i + 0.5) / fk, w, h))
    D = np.clip(np.array(boxes), 0, 1)
    locs, confs = arrays
    cx = 0.1 * locs[:, 0] * D[:, 2] + D[:, 0]
    cy = 0.1 * locs[:, 1] * D[:, 3] + D[:, 1]
    w = np.exp(0.2 * locs[:, 2]) * D[:, 2]
    h = np.exp(0.2 * locs[:, 3]) * D[:, 3]
    x1, y1, x2, y2 = corners(cx * W, cy * H, w * W, h * H)
    e = np.exp(confs - confs.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    for b, c, i in zip(*np.nonzero(p[:, 1:, :] > thr)):
        emit(b, c + 1, p[b, c + 1, i], x1[b, i], y1[b, i], x2[b, i], y2[b, i])
else:
    # YOLOv3 (Redmon & Farhadi): b_x = sigma(t_x) + c_x, b_w = p_w e^t_w; YOLOv5: 2 sigma - 0.5 + c, (2 sigma)^2 p_w.
    anchors = {8: [(10, 13), (16, 30), (33, 23)], 16: [(30, 61), (62, 45), (59, 119)],
               32: [(116, 90), (156, 198), (373, 326)]}
    v5 = coding == 'yolov5'
    for t in arrays:
        b_, ch, gh, gw = t.shape
        stride = H // gh
        t = t.reshape(b_, 3, ch // 3, gh, gw)
        gy, gx = np.meshgrid(np.arange(gh), np.arange(gw), indexing='ij')
        pw = np.array([a[0] for a in anchors[stride]])[None, :, None, None]
        ph = np.array([a[1] for a in anchors[stride]])[None, :, None, None]
        if v5:
            cx, cy = (2 * sig(t[:, :, 0]) - 0.5 + gx) * stride, (2 * sig(t[:, :, 1]) - 0.5 + gy) * stride
            w, h = (2 * sig(t[:, :, 2])) ** 2 * pw, (2 * sig(t[:, :, 3])) ** 2 * ph
        else:
            cx, cy = (sig(t[:, :, 0]) + gx) * stride, (sig(t[:, :, 1]) + gy) * stride
            w, h = np.exp(t[:, :, 2]) * pw, np.exp(t[:, :, 3]) * ph
        x1, y1, x2, y2 = corners(cx, cy, w, h)
        obj = sig(t[:, :, 4])
        p = obj[:, :, None] * sig(t[:, :, 5:])
        if v5:
            best, c = p.max(axis=2), p.argmax(axis=2)
            for b, a, i, j in zip(*np.nonzero((obj > thr) & (best > thr))):
                emit(b, c[b, a, i, j], best[b, a, i, j], x1[b, a, i, j], y1[b, a, i, j], x2[b, a, i, j], y2[b, a, i, j])
        else:
            for b, a, c, i, j in zip(*np.nonzero((obj[:, :, None] > thr) & (p > thr))):
                emit(b, c, p[b, a, c, i, j], x1[b, a, i, j], y1[b, a, i, j], x2[b, a, i, j], y2[b, a, i, j])
print('\n'.join(out))
)";

std::vector<Candidate> numpy_reference(BoxCoding coding, const std::vector<Output>& outputs, ImageSize input,
                                       float threshold) {
    testing::ScratchDir dir;
    const std::string path = dir.file("outputs.f32");
    std::string text = fmt::format("{} {} {} {} {:.9g}", to_string(coding), path, input.width, input.height, threshold);
    {
        std::ofstream file(path, std::ios::binary);
        for (const Output& o : outputs) {
            file.write(reinterpret_cast<const char*>(o.values.data()),
                       static_cast<std::streamsize>(o.values.size() * sizeof(float)));
            text += fmt::format(" {}", fmt::join(o.shape, "x"));
        }
    }
    std::istringstream lines(testing::run_python_reference(kNumpyDecoders, text));
    std::vector<Candidate> candidates;
    Candidate c{};
    while (lines >> c.image >> c.class_id >> c.score >> c.box.x1 >> c.box.y1 >> c.box.x2 >> c.box.y2) {
        candidates.push_back(c);
    }
    return candidates;
}

std::vector<Candidate> flatten(const std::vector<BoxCandidates>& images) {
    std::vector<Candidate> all;
    for (std::size_t b = 0; b < images.size(); ++b) {
        for (std::size_t i = 0; i < images[b].size(); ++i) {
            all.push_back(
                {static_cast<std::int64_t>(b), images[b].classes[i], images[b].scores[i], images[b].boxes[i]});
        }
    }
    return all;
}

bool near(float a, float b) { return std::abs(a - b) <= 1e-3F + 2e-5F * std::abs(b); }

bool same(const Candidate& a, const Candidate& b) {
    return a.image == b.image && a.class_id == b.class_id && std::abs(a.score - b.score) <= 1e-5F &&
           near(a.box.x1, b.box.x1) && near(a.box.y1, b.box.y1) && near(a.box.x2, b.box.x2) && near(a.box.y2, b.box.y2);
}

// Every candidate of one list clear of the threshold (where float and double may disagree) has its twin in the
// other; returns how many were matched.
std::size_t expect_each_in(const std::vector<Candidate>& from, const std::vector<Candidate>& in, float threshold,
                           std::string_view direction) {
    std::map<std::pair<std::int64_t, std::int64_t>, std::vector<Candidate>> by_class;
    for (const Candidate& o : in) by_class[{o.image, o.class_id}].push_back(o);
    std::size_t matched = 0;
    std::size_t shown = 0;
    for (const Candidate& c : from) {
        if (c.score <= threshold + 1e-5F) continue;
        const auto it = by_class.find({c.image, c.class_id});
        const bool found =
            it != by_class.end() && std::ranges::any_of(it->second, [&](const Candidate& o) { return same(c, o); });
        matched += found ? 1 : 0;
        if (!found && shown++ < 5) {
            ADD_FAILURE() << direction << ": image " << c.image << " class " << c.class_id << " score " << c.score
                          << " box " << c.box.x1 << " " << c.box.y1 << " " << c.box.x2 << " " << c.box.y2;
        }
    }
    return matched;
}

void expect_matches_numpy(BoxCoding coding, const std::vector<Output>& outputs, ImageSize input, float threshold) {
    std::vector<FloatTensor> views;
    for (const Output& o : outputs) views.push_back(o.view());
    const std::vector<Candidate> ours = flatten(decode_boxes({coding, 0}, views, input, threshold));
    const std::vector<Candidate> reference = numpy_reference(coding, outputs, input, threshold);
    ASSERT_GT(reference.size(), 20U) << "too few candidates to say anything";
    ASSERT_LT(reference.size(), 20'000U) << "more candidates than a quick test needs";
    EXPECT_EQ(expect_each_in(ours, reference, threshold, "decoded here, not by NumPy"),
              expect_each_in(reference, ours, threshold, "decoded by NumPy, not here"));
    EXPECT_NEAR(static_cast<double>(ours.size()), static_cast<double>(reference.size()), 3.0);
}

TEST(BoxDecoding, SsdMobilenetMatchesTheNumpyReference) {
    SKIP_WITHOUT_NUMPY();
    expect_matches_numpy(BoxCoding::ssd_tf_anchors,
                         {random_output({2, 1917, 4}, 0, 1, 1), random_output({2, 1917, 91}, -4, 1.5F, 2)}, {300, 300},
                         0.3F);
}

TEST(BoxDecoding, SsdResnet34MatchesTheNumpyReference) {
    SKIP_WITHOUT_NUMPY();
    expect_matches_numpy(BoxCoding::ssd_r34_dboxes,
                         {random_output({1, 4, 15130}, 0, 1, 3), random_output({1, 81, 15130}, 0, 0.6F, 4)},
                         {1200, 1200}, 0.05F);
}

TEST(BoxDecoding, Yolov3MatchesTheNumpyReference) {
    SKIP_WITHOUT_NUMPY();
    // The zoo's order: the coarsest scale first.
    expect_matches_numpy(
        BoxCoding::yolov3,
        {random_output({2, 255, 13, 13}, -2.5F, 1.5F, 5), random_output({2, 255, 26, 26}, -2.5F, 1.5F, 6),
         random_output({2, 255, 52, 52}, -2.5F, 1.5F, 7)},
        {416, 416}, 0.5F);
}

TEST(BoxDecoding, Yolov5MatchesTheNumpyReference) {
    SKIP_WITHOUT_NUMPY();
    // ultralytics' order: the finest scale first.
    expect_matches_numpy(
        BoxCoding::yolov5,
        {random_output({2, 255, 40, 40}, -2.5F, 1.5F, 8), random_output({2, 255, 20, 20}, -2.5F, 1.5F, 9),
         random_output({2, 255, 10, 10}, -2.5F, 1.5F, 10)},
        {320, 320}, 0.25F);
}

TEST(BoxDecoding, PriorsHaveThePublishedCountsAndFirstBoxes) {
    const std::vector<Prior> tf = ssd_mobilenet_priors(300);
    ASSERT_EQ(tf.size(), 1917U);  // 19*19*3 + (10*10 + 5*5 + 3*3 + 2*2 + 1) * 6
    EXPECT_FLOAT_EQ(tf[0].cx, 0.5F / 19);
    EXPECT_FLOAT_EQ(tf[0].w, 0.1F);
    EXPECT_NEAR(tf[1].w, 0.2 * std::sqrt(2.0), 1e-6);  // (0.2, aspect 2)
    EXPECT_NEAR(tf.back().w, std::sqrt(0.95), 1e-6);   // the last layer's interpolated scale sqrt(0.95 * 1.0)
    EXPECT_FLOAT_EQ(tf.back().cx, 0.5F);

    const std::vector<Prior> r34 = ssd_resnet34_priors();
    ASSERT_EQ(r34.size(), 15130U);
    EXPECT_FLOAT_EQ(r34[0].cx, 0.5F / 50);
    EXPECT_FLOAT_EQ(r34[0].w, 84.0F / 1200);
    EXPECT_FLOAT_EQ(r34[2500].w, static_cast<float>(std::sqrt(84.0 / 1200 * 180.0 / 1200)));  // the second size
    for (const Prior& p : r34) {
        EXPECT_TRUE(p.cx >= 0 && p.cx <= 1 && p.w >= 0 && p.w <= 1);
    }
}

TEST(BoxDecoding, OutputsOfTheWrongShapeAreOneClearError) {
    const Output boxes = random_output({1, 100, 4}, 0, 1, 1);
    const Output logits = random_output({1, 100, 91}, 0, 1, 2);
    const std::vector<FloatTensor> views = {boxes.view(), logits.view()};
    try {
        decode_boxes({BoxCoding::ssd_tf_anchors, 0}, views, {300, 300}, 0.3F);
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "TF SSD box decoding: a 300x300 input has 1917 anchors; the model's outputs "
                  "have 100");
    }
    EXPECT_THROW(decode_boxes({BoxCoding::yolov3, 0}, views, {416, 416}, 0.5F), UserError);
    const Output odd = random_output({1, 255, 13, 13}, 0, 1, 3);
    const std::vector<FloatTensor> yolo = {odd.view()};
    EXPECT_THROW(decode_boxes({BoxCoding::yolov3, 0}, yolo, {400, 400}, 0.5F), UserError);  // stride 30
    EXPECT_THROW(decode_boxes({BoxCoding::none, 0}, yolo, {416, 416}, 0.5F), UserError);
}

}  // namespace
}  // namespace inferbench::pipeline
