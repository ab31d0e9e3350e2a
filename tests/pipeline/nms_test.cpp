// NMS against torchvision.ops.nms and batched_nms on random and adversarial boxes: the same kept indices in the
// same order (ties, zero-area boxes and IoU exactly at the threshold included).
#include "pipeline/nms.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "pipeline/python_reference.hpp"

namespace inferbench::pipeline {
namespace {

struct Case {
    std::string name;
    float iou = 0.5F;
    std::vector<Box> boxes;
    std::vector<float> scores;
    std::vector<std::int64_t> classes;

    void add(Box b, float score, std::int64_t cls) {
        boxes.push_back(b);
        scores.push_back(score);
        classes.push_back(cls);
    }
};

// Boxes anywhere in a 640x640 image, sides 1..200, scores in (0, 1).
Case random_case(std::string name, std::size_t n, std::int64_t classes, float iou, std::uint32_t seed) {
    Case c{std::move(name), iou, {}, {}, {}};
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> pos(0.0F, 640.0F);
    std::uniform_real_distribution<float> side(1.0F, 200.0F);
    std::uniform_real_distribution<float> score(0.0F, 1.0F);
    std::uniform_int_distribution<std::int64_t> cls(0, classes - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const float x = pos(rng);
        const float y = pos(rng);
        c.add({x, y, x + side(rng), y + side(rng)}, score(rng), cls(rng));
    }
    return c;
}

// Integer corners on a small grid and scores of a few values: many boxes share scores and IoUs land exactly on
// simple fractions, where rounding and tie order decide.
Case grid_case(std::string name, std::size_t n, std::int64_t classes, float iou, std::uint32_t seed) {
    Case c{std::move(name), iou, {}, {}, {}};
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> pos(0, 12);
    std::uniform_int_distribution<int> side(0, 4);
    std::uniform_int_distribution<int> score(1, 4);
    std::uniform_int_distribution<std::int64_t> cls(0, classes - 1);
    for (std::size_t i = 0; i < n; ++i) {
        const auto x = static_cast<float>(pos(rng));
        const auto y = static_cast<float>(pos(rng));
        c.add({x, y, x + static_cast<float>(side(rng)), y + static_cast<float>(side(rng))},
              static_cast<float>(score(rng)) / 4.0F, cls(rng));
    }
    return c;
}

std::vector<Case> adversarial_cases() {
    std::vector<Case> cases;
    Case ties{"identical_boxes_equal_scores", 0.5F, {}, {}, {}};
    for (int i = 0; i < 40; ++i) ties.add({10, 10, 50, 50}, 0.7F, i % 2);
    cases.push_back(ties);

    Case zero{"zero_area", 0.3F, {}, {}, {}};
    for (int i = 0; i < 10; ++i) zero.add({5, 5, 5, 5}, 0.9F - 0.01F * static_cast<float>(i), 0);  // points
    for (int i = 0; i < 10; ++i) zero.add({0, 3, 20, 3}, 0.5F, 0);                                 // lines
    zero.add({0, 0, 10, 10}, 0.95F, 0);
    zero.add({5, 5, 5, 5}, 0.99F, 1);
    cases.push_back(zero);

    Case nested{"all_overlapping", 0.5F, {}, {}, {}};
    for (int i = 0; i < 60; ++i) {
        const auto f = static_cast<float>(i);
        nested.add({f, f, 200 - f, 200 - f}, 0.2F + 0.01F * f, 0);
    }
    cases.push_back(nested);

    Case chain{"iou_at_the_threshold", 0.5F, {}, {}, {}};  // neighbours overlap by exactly 2/4
    for (int i = 0; i < 30; ++i)
        chain.add({static_cast<float>(i), 0, static_cast<float>(i + 3), 1}, 1.0F - 0.01F * static_cast<float>(i), 0);
    cases.push_back(chain);

    Case own{"every_box_its_own_class", 0.1F, {}, {}, {}};
    for (int i = 0; i < 80; ++i) own.add({0, 0, 10, 10}, 0.5F + 0.001F * static_cast<float>(i % 7), i);
    cases.push_back(own);
    return cases;
}

std::vector<Case> all_cases() {
    std::vector<Case> cases = adversarial_cases();
    cases.push_back(random_case("random_one_class", 300, 1, 0.5F, 1));
    cases.push_back(random_case("random_five_classes", 400, 5, 0.45F, 2));
    cases.push_back(random_case("random_many_classes", 900, 90, 0.6F, 3));
    cases.push_back(random_case("random_per_class_path", 2500, 10, 0.5F, 4));  // over torchvision's 4000 coordinates
    cases.push_back(grid_case("grid_ties_offset_path", 500, 3, 0.5F, 5));
    cases.push_back(grid_case("grid_ties_per_class_path", 1600, 4, 1.0F / 3.0F, 6));
    return cases;
}

// One case a block: "case NAME IOU N", then N lines "x1 y1 x2 y2 score class", every float printed so that it reads
// back as the same float32.
std::string cases_text(const std::vector<Case>& cases) {
    std::string text;
    for (const Case& c : cases) {
        text += fmt::format("case {} {:.17g} {}\n", c.name, static_cast<double>(c.iou), c.boxes.size());
        for (std::size_t i = 0; i < c.boxes.size(); ++i) {
            const Box& b = c.boxes[i];
            text += fmt::format("{:.9g} {:.9g} {:.9g} {:.9g} {:.9g} {}\n", b.x1, b.y1, b.x2, b.y2, c.scores[i],
                                c.classes[i]);
        }
    }
    return text;
}

constexpr const char* kTorchvisionNms = R"(
import sys, torch, torchvision
lines = sys.stdin.read().splitlines()
i = 0
while i < len(lines):
    _, name, iou, n = lines[i].split()
    n = int(n)
    rows = [l.split() for l in lines[i + 1:i + 1 + n]]
    i += 1 + n
    boxes = torch.tensor([[float(v) for v in r[:4]] for r in rows], dtype=torch.float32).reshape(-1, 4)
    scores = torch.tensor([float(r[4]) for r in rows], dtype=torch.float32)
    classes = torch.tensor([int(r[5]) for r in rows], dtype=torch.int64)
    keep = torchvision.ops.nms(boxes, scores, float(iou))
    print(name, 'nms', *keep.tolist())
    keep = torchvision.ops.batched_nms(boxes, scores, classes, float(iou))
    print(name, 'batched', *keep.tolist())
)";

using Kept = std::map<std::pair<std::string, std::string>, std::vector<std::int64_t>>;

Kept parse_kept(const std::string& out) {
    Kept kept;
    std::istringstream lines(out);
    std::string line;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string name, kind;
        words >> name >> kind;
        std::vector<std::int64_t> indices;
        for (std::int64_t i = 0; words >> i;) indices.push_back(i);
        kept[{name, kind}] = indices;
    }
    return kept;
}

// torchvision orders batched_nms' kept boxes of more than 1000 by an unstable sort: among equal scores its order is
// arbitrary, so there the runs of equal scores are compared as sets.
std::vector<std::int64_t> ties_sorted(std::vector<std::int64_t> keep, const std::vector<float>& scores) {
    for (std::size_t begin = 0; begin < keep.size();) {
        std::size_t end = begin + 1;
        while (end < keep.size() &&
               scores[static_cast<std::size_t>(keep[end])] == scores[static_cast<std::size_t>(keep[begin])]) {
            ++end;
        }
        std::sort(keep.begin() + static_cast<std::ptrdiff_t>(begin), keep.begin() + static_cast<std::ptrdiff_t>(end));
        begin = end;
    }
    return keep;
}

TEST(Nms, KeepsWhatTorchvisionKeepsInItsOrder) {
    SKIP_WITHOUT_TORCHVISION();
    const std::vector<Case> cases = all_cases();
    const Kept reference = parse_kept(testing::run_python_reference(kTorchvisionNms, cases_text(cases)));
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        ASSERT_TRUE(reference.contains({c.name, "nms"}));
        EXPECT_EQ(nms(c.boxes, c.scores, c.iou), reference.at({c.name, "nms"}));
        const std::vector<std::int64_t> batched = batched_nms(c.boxes, c.scores, c.classes, c.iou);
        if (c.boxes.size() * 4 > 4000) {
            EXPECT_EQ(ties_sorted(batched, c.scores), ties_sorted(reference.at({c.name, "batched"}), c.scores));
            EXPECT_TRUE(std::ranges::is_sorted(batched, [&](std::int64_t a, std::int64_t b) {
                return c.scores[static_cast<std::size_t>(a)] > c.scores[static_cast<std::size_t>(b)] ||
                       (c.scores[static_cast<std::size_t>(a)] == c.scores[static_cast<std::size_t>(b)] && a < b);
            })) << "equal scores keep index order";
        } else {
            EXPECT_EQ(batched, reference.at({c.name, "batched"}));
        }
    }
}

TEST(Nms, SuppressesAboveTheThresholdOnly) {
    // IoU of neighbours 0.5 exactly, of the next but one 0.2: at 0.5 nothing goes; just under, every other box.
    const std::vector<Box> boxes = {{0, 0, 3, 1}, {1, 0, 4, 1}, {2, 0, 5, 1}};
    const std::vector<float> scores = {0.9F, 0.8F, 0.7F};
    EXPECT_EQ(nms(boxes, scores, 0.5F), (std::vector<std::int64_t>{0, 1, 2}));
    EXPECT_EQ(nms(boxes, scores, 0.49F), (std::vector<std::int64_t>{0, 2}));
}

TEST(Nms, ZeroAreaBoxesNeverSuppressEachOther) {
    const std::vector<Box> boxes(4, Box{3, 3, 3, 3});
    const std::vector<float> scores = {0.1F, 0.4F, 0.4F, 0.2F};
    EXPECT_EQ(nms(boxes, scores, 0.0F), (std::vector<std::int64_t>{1, 2, 3, 0}));
}

TEST(Nms, ClassesDoNotSuppressEachOther) {
    const std::vector<Box> boxes(3, Box{0, 0, 10, 10});
    const std::vector<float> scores = {0.5F, 0.9F, 0.7F};
    EXPECT_EQ(batched_nms(boxes, scores, std::vector<std::int64_t>{0, 1, 0}, 0.5F), (std::vector<std::int64_t>{1, 2}));
    EXPECT_TRUE(batched_nms({}, {}, {}, 0.5F).empty());
}

TEST(Nms, SelectDetectionsCapsCandidatesPerClassThenDetections) {
    BoxCandidates c;
    for (int i = 0; i < 6; ++i) {  // class 0: six disjoint boxes; class 1: one
        c.boxes.push_back({static_cast<float>(20 * i), 0, static_cast<float>(20 * i + 10), 10});
        c.scores.push_back(0.1F * static_cast<float>(i + 1));
        c.classes.push_back(0);
    }
    c.boxes.push_back({0, 0, 10, 10});
    c.scores.push_back(0.35F);
    c.classes.push_back(1);
    const auto all = select_detections(c, 0.5F, 0);
    ASSERT_EQ(all.size(), 7U);
    EXPECT_FLOAT_EQ(all.front().score, 0.6F);
    const auto capped = select_detections(c, 0.5F, 3, 2);  // class 0's best two (0.6, 0.5), class 1's 0.35
    ASSERT_EQ(capped.size(), 3U);
    EXPECT_EQ(capped[0], (Detection{{100, 0, 110, 10}, 0.6F, 0}));
    EXPECT_FLOAT_EQ(capped[1].score, 0.5F);
    EXPECT_EQ(capped[2].class_id, 1);
    EXPECT_EQ(select_detections(c, 0.5F, 1).size(), 1U);
}

TEST(Nms, MismatchedLengthsAreRefused) {
    const std::vector<Box> boxes(2);
    const std::vector<float> scores(1);
    EXPECT_THROW(nms(boxes, scores, 0.5F), std::invalid_argument);
}

}  // namespace
}  // namespace inferbench::pipeline
