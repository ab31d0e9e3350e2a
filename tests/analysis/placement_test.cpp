// The placement warning of a GPU benchmark: the nodes its per-layer profile says ran on the CPU.
#include "analysis/placement.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferbench::analysis {
namespace {

using ::testing::HasSubstr;

std::vector<LayerTime> detector_layers() {
    return {{"images_MemcpyFromHost", "MemcpyFromHost", "CUDAExecutionProvider", 1, 21'000},
            {"/backbone/conv1/Conv", "FusedConv", "CUDAExecutionProvider", 1, 35'000},
            {"/head/Shape", "Shape", "CPUExecutionProvider", 1, 6'000},
            {"/head/NonMaxSuppression", "NonMaxSuppression", "CPUExecutionProvider", 1, 1'302'000},
            {"/head/Gather", "Gather", "CUDAExecutionProvider", 1, 9'000}};
}

TEST(Placement, NamesTheNodesThatRanOnTheCpuInTheirOrder) {
    const auto layers = detector_layers();
    const auto nodes = cpu_fallback_nodes(layers);
    ASSERT_EQ(nodes.size(), 2u);
    EXPECT_EQ(nodes[0]->node, "/head/Shape");
    EXPECT_EQ(nodes[1]->node, "/head/NonMaxSuppression");
    EXPECT_EQ(placement_warning("cuda:0", layers),
              "2 of 5 nodes ran on CPUExecutionProvider, not the GPU (their copies and CPU time are in the GPU "
              "figures): /head/Shape (Shape), /head/NonMaxSuppression (NonMaxSuppression)");
}

TEST(Placement, ShortensALongList) {
    EXPECT_THAT(placement_warning("cuda:1", detector_layers(), 1).value_or(""),
                HasSubstr(": /head/Shape (Shape) and 1 more"));
}

TEST(Placement, NoWarningOnTheCpuOrWhenEverythingRanOnTheGpu) {
    EXPECT_EQ(placement_warning("cpu", detector_layers()), std::nullopt);
    std::vector<LayerTime> gpu_only = detector_layers();
    std::erase_if(gpu_only, [](const LayerTime& l) { return l.provider == kCpuProvider; });
    EXPECT_EQ(placement_warning("cuda:0", gpu_only), std::nullopt);
    EXPECT_EQ(placement_warning("cuda:0", {}), std::nullopt);
}

}  // namespace
}  // namespace inferbench::analysis
