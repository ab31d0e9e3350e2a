// Cost per inference of a model file at a batch size: what every benchmark stores for the roofline.
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/inference_cost.hpp"
#include "models/zoo.hpp"

namespace inferbench::models {
namespace {

TEST(InferenceCost, PerSampleFiguresOfAZooModelAtTwoBatchSizes) {
    testing::ScratchDir scratch;
    const auto file = export_onnx("mobilenet", scratch.path(), 1);
    const InferenceCost one = inference_cost(file, 1);
    const InferenceCost four = inference_cost(file, 4);
    // MobileNet v1 1.0 224 has 4.2 M parameters (Howard et al. 2017, Table 8; the zoo test pins the
    // exact count): the same at both batch sizes.
    EXPECT_EQ(one.parameters, four.parameters);
    EXPECT_GT(one.parameters, 4'200'000);
    EXPECT_LT(one.parameters, 4'300'000);
    // 568.7 M MACs per image (Howard et al. 2017: 569 M), the same per sample at any batch.
    EXPECT_NEAR(one.macs / 569e6, 1.0, 0.02);
    EXPECT_DOUBLE_EQ(one.macs, four.macs);
    EXPECT_GE(one.flops, 2 * one.macs);
    EXPECT_DOUBLE_EQ(one.flops, four.flops);
    // Weights are read once per batch: four samples share them, so each moves fewer bytes.
    EXPECT_LT(four.bytes, one.bytes);
    EXPECT_GT(four.bytes, one.bytes / 4);
    EXPECT_EQ(one.unknown_nodes, 0);
}

TEST(InferenceCost, AFileThatIsNotOnnxIsAUserError) {
    testing::ScratchDir scratch;
    const auto file = scratch.path() / "x.onnx";
    std::FILE* f = std::fopen(file.c_str(), "wb");
    std::fputs("not a model", f);
    std::fclose(f);
    EXPECT_THROW(inference_cost(file, 1), UserError);
}

}  // namespace
}  // namespace inferbench::models
