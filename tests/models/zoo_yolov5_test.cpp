// YOLOv5's graphs, checked in memory: yolov5s is built once for its structure; m, l and x (up to
// 87M parameters, ~350 MB) are built one at a time for their counts only, never written.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"
#include "zoo_graph_checks.hpp"

namespace inferbench::models {
namespace {

using testing::batch_norm_channels;
using testing::expect_dims;
using testing::op_counts;

class YoloV5s : public ::testing::Test {
protected:
    static void SetUpTestSuite() { graph_.emplace(build_zoo_model("yolov5s", 0)); }
    static void TearDownTestSuite() { graph_.reset(); }
    static const GraphBuilder& graph() { return *graph_; }

private:
    static inline std::optional<GraphBuilder> graph_;
};

struct Published {
    const char* name;
    std::int64_t unfused;  // training summary: "YOLOv5s summary: 214 layers, 7235389 parameters"
    std::int64_t fused;    // after model.fuse() (val.py, detect.py); the README's 7.2M, 21.2M, ...
};
constexpr Published kPublished[] = {{"yolov5s", 7'235'389, 7'225'885},
                                    {"yolov5m", 21'190'557, 21'172'173},
                                    {"yolov5l", 46'563'709, 46'533'693},
                                    {"yolov5x", 86'749'405, 86'705'005}};

// ultralytics YOLOv5 v7.0 prints both counts; the zoo counts BN gamma and beta, as resnet50's
// torchvision count does, so its entries hold the unfused ones. Folding BN turns each BN
// channel's gamma and beta into one conv bias, which gives the README's figures exactly.
TEST(YoloV5Parameters, MatchUltralyticsBothFusedAndUnfused) {
    for (const Published& p : kPublished) {
        SCOPED_TRACE(p.name);
        const GraphBuilder g = build_zoo_model(p.name, 0);
        EXPECT_EQ(g.parameter_count(), p.unfused);
        EXPECT_EQ(g.parameter_count() - batch_norm_channels(g), p.fused);
        ASSERT_NE(find_zoo_model(p.name), nullptr);
        EXPECT_EQ(find_zoo_model(p.name)->parameters, p.unfused);
    }
}

TEST_F(YoloV5s, HasAnImageInputAndThreeRawDetectOutputsWithADynamicBatch) {
    ASSERT_EQ(graph().inputs().size(), 1U);
    EXPECT_EQ(graph().inputs()[0].name, "images");
    expect_dims(graph().inputs()[0], kBatchDimName, {3, 640, 640});
    ASSERT_EQ(graph().outputs().size(), 3U);
    const std::int64_t sizes[] = {80, 40, 20};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(graph().outputs()[i].name, "output_p" + std::to_string(i + 3));
        expect_dims(graph().outputs()[i], kBatchDimName, {255, sizes[i], sizes[i]});
    }
}

TEST_F(YoloV5s, IsATopologicallyOrderedWellFormedGraph) { testing::expect_well_formed(graph()); }

// yolov5s.yaml at depth 0.33: C3 repeats 1, 2, 3, 1 in the backbone and 1 in each of the neck's
// four. Convs: 33 in the backbone (stem, 4 downsamples, C3s of 3 + 2n, SPPF's 2), 24 in the neck,
// 3 in Detect; every conv but Detect's has BN and SiLU (Sigmoid + Mul).
TEST_F(YoloV5s, HasTheScaledLayerStructure) {
    const auto counts = op_counts(graph());
    EXPECT_EQ(counts.at("Conv"), 60);
    EXPECT_EQ(counts.at("BatchNormalization"), 57);
    EXPECT_EQ(counts.at("Sigmoid"), 57);
    EXPECT_EQ(counts.at("Mul"), 57);
    EXPECT_EQ(counts.at("Add"), 1 + 2 + 3 + 1);  // backbone bottleneck shortcuts only
    EXPECT_EQ(counts.at("MaxPool"), 3);
    EXPECT_EQ(counts.at("Resize"), 2);
    EXPECT_EQ(counts.at("Concat"), 8 + 4 + 1);  // C3s, neck, SPPF
    EXPECT_EQ(testing::initializer(graph(), "model.0.conv.weight").dims, (std::vector<std::int64_t>{32, 3, 6, 6}));
    EXPECT_EQ(testing::initializer(graph(), "model.9.cv2.conv.weight").dims,
              (std::vector<std::int64_t>{512, 1024, 1, 1}));
    EXPECT_EQ(testing::initializer(graph(), "model.24.m.2.weight").dims, (std::vector<std::int64_t>{255, 512, 1, 1}));
    EXPECT_EQ(testing::node(graph(), "model.12").inputs, (std::vector<std::string>{"model.11", "model.6.cv3.act"}));
}

TEST(YoloV5Config, RejectsSizesThatAreNotMultiplesOf32) {
    YoloV5Config odd = kYoloV5s;
    odd.image_size = 100;
    EXPECT_THROW(build_yolov5(odd, 0), std::logic_error);
}

}  // namespace
}  // namespace inferbench::models
