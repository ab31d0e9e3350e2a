// YOLOv3's graph, checked in memory: yolov3 (62M parameters, ~250 MB) is built once, never written.
#include <optional>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"
#include "zoo_graph_checks.hpp"

namespace inferbench::models {
namespace {

using testing::expect_dims;
using testing::node;
using testing::op_counts;

class YoloV3 : public ::testing::Test {
protected:
    static void SetUpTestSuite() { graph_.emplace(build_zoo_model("yolov3", 0)); }
    static void TearDownTestSuite() { graph_.reset(); }
    static const GraphBuilder& graph() { return *graph_; }

private:
    static inline std::optional<GraphBuilder> graph_;
};

// Darknet's yolov3.weights and ultralytics' yolov3 (models/yolov3.yaml, "61.9M") both hold
// 61,949,149 trainable parameters with BN gamma and beta; the image size changes no weight.
TEST_F(YoloV3, CountsThePublishedParameters) {
    EXPECT_EQ(graph().parameter_count(), 61'949'149);
    ASSERT_NE(find_zoo_model("yolov3"), nullptr);
    ASSERT_NE(find_zoo_model("yolov3-608"), nullptr);
    EXPECT_EQ(find_zoo_model("yolov3")->parameters, 61'949'149);
    EXPECT_EQ(find_zoo_model("yolov3-608")->parameters, 61'949'149);
}

TEST_F(YoloV3, HasAnImageInputAndThreeRawHeadOutputsWithADynamicBatch) {
    ASSERT_EQ(graph().inputs().size(), 1U);
    expect_dims(graph().inputs()[0], kBatchDimName, {3, 416, 416});
    ASSERT_EQ(graph().outputs().size(), 3U);
    const char* names[] = {"output_p5", "output_p4", "output_p3"};
    const std::int64_t sizes[] = {13, 26, 52};
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(graph().outputs()[i].name, names[i]);
        expect_dims(graph().outputs()[i], kBatchDimName, {255, sizes[i], sizes[i]});
    }
}

TEST_F(YoloV3, IsATopologicallyOrderedWellFormedGraph) { testing::expect_well_formed(graph()); }

// yolov3.cfg: 75 convolutional layers, of which the 3 detection convs are linear with a bias and
// the other 72 are BN + leaky; 23 shortcuts (1 + 2 + 8 + 8 + 4), 2 upsamples, 2 routes that concat.
TEST_F(YoloV3, HasDarknetsLayerStructure) {
    const auto counts = op_counts(graph());
    EXPECT_EQ(counts.at("Conv"), 75);
    EXPECT_EQ(counts.at("BatchNormalization"), 72);
    EXPECT_EQ(counts.at("LeakyRelu"), 72);
    EXPECT_EQ(counts.at("Add"), 23);
    EXPECT_EQ(counts.at("Resize"), 2);
    EXPECT_EQ(counts.at("Concat"), 2);
    EXPECT_EQ(counts.size(), 6U);  // nothing else: no decoding
    EXPECT_FLOAT_EQ(node(graph(), "backbone.stem.act").attributes.at(0).f, 0.1F);
    EXPECT_EQ(node(graph(), "head.p4.concat").inputs,
              (std::vector<std::string>{"head.p4.upsample", "backbone.stage4.block7.add"}));
    EXPECT_EQ(node(graph(), "head.p3.concat").inputs,
              (std::vector<std::string>{"head.p3.upsample", "backbone.stage3.block7.add"}));
    EXPECT_EQ(testing::initializer(graph(), "head.p3.detect.weight").dims, (std::vector<std::int64_t>{255, 256, 1, 1}));
}

TEST(YoloV3Config, RejectsSizesThatAreNotMultiplesOf32) {
    EXPECT_THROW(build_yolov3(400, 0), std::logic_error);
    EXPECT_THROW(build_yolov3(0, 0), std::logic_error);
}

}  // namespace
}  // namespace inferbench::models
