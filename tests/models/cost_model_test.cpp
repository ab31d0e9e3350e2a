// The cost model on tiny graphs whose numbers are worked out by hand in the comments.
#include "models/cost_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph_fixture.hpp"

namespace inferbench::models {
namespace {

using testing::GraphFixture;
using testing::Ints;

ModelCost cost_of(const GraphFixture& g, CostOptions options = {}) {
    return estimate_cost(g.model, infer_shapes(g.model), options);
}

bool has_flag(const NodeCost& n, const std::string& flag) { return std::ranges::find(n.flags, flag) != n.flags.end(); }

TEST(CostModel, ConvCountsMacsParametersAndBytes) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{16}, std::int64_t{8}, std::int64_t{8}});
    g.weight("w", {32, 16, 3, 3}).weight("b", {32});
    g.node("Conv", {"x", "w", "b"}, {"y"}, {{"pads", Ints{1, 1, 1, 1}}});
    const auto cost = cost_of(g);
    const auto& n = cost.nodes.at(0);
    EXPECT_EQ(n.macs, 1 * 32 * 8 * 8 * 16 * 3 * 3);  // N*Cout*Hout*Wout*(Cin/groups)*kh*kw = 294,912
    EXPECT_EQ(n.flops, 2 * 294'912);
    EXPECT_EQ(n.parameters, 32 * 16 * 9 + 32);       // 4,640
    EXPECT_EQ(n.bytes_read, (16 * 64 + 4'640) * 4);  // input 4,096 B + weights 18,560 B
    EXPECT_EQ(n.bytes_written, 32 * 64 * 4);         // 8,192 B
    EXPECT_DOUBLE_EQ(n.intensity(), 589'824.0 / (22'656 + 8'192));
    EXPECT_TRUE(n.flags.empty());
    EXPECT_EQ(cost.totals.parameters, 4'640);
}

TEST(CostModel, FlagsDepthwiseGroupedPointwiseAndUnaligned) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{32}, std::int64_t{8}, std::int64_t{8}});
    g.weight("dw", {32, 1, 3, 3}).weight("gw", {32, 8, 3, 3}).weight("pw", {20, 32, 1, 1});
    g.node("Conv", {"x", "dw"}, {"d"}, {{"group", std::int64_t{32}}, {"pads", Ints{1, 1, 1, 1}}});
    g.node("Conv", {"x", "gw"}, {"q"}, {{"group", std::int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}});
    g.node("Conv", {"x", "pw"}, {"p"});
    const auto cost = cost_of(g);
    EXPECT_EQ(cost.nodes[0].macs, 32 * 64 * 1 * 9);  // 18,432: one input channel per output channel
    EXPECT_TRUE(has_flag(cost.nodes[0], "depthwise"));
    EXPECT_EQ(cost.nodes[1].macs, 32 * 64 * 8 * 9);
    EXPECT_TRUE(has_flag(cost.nodes[1], "grouped"));
    EXPECT_TRUE(has_flag(cost.nodes[2], "1x1"));
    EXPECT_TRUE(has_flag(cost.nodes[2], "unaligned"));  // 20 output channels
    EXPECT_FALSE(has_flag(cost.nodes[0], "unaligned"));
    ASSERT_EQ(cost.flags.size(), 4u);
    EXPECT_EQ(cost.flags[0].rfind("1x1: 1 ", 0), 0u) << cost.flags[0];
}

TEST(CostModel, GemmAndMatMulCountOutputTimesK) {
    GraphFixture g;
    g.input("x", {std::int64_t{2}, std::int64_t{100}}).weight("w", {10, 100}).weight("b", {10});
    g.input("a", {std::int64_t{2}, std::int64_t{3}, std::int64_t{4}}).weight("m", {4, 5});
    g.node("Gemm", {"x", "w", "b"}, {"y"}, {{"transB", std::int64_t{1}}});
    g.node("MatMul", {"a", "m"}, {"z"});
    const auto cost = cost_of(g);
    EXPECT_EQ(cost.nodes[0].macs, 2 * 10 * 100);
    EXPECT_EQ(cost.nodes[0].parameters, 1'010);
    EXPECT_TRUE(has_flag(cost.nodes[0], "unaligned"));  // K = 100
    EXPECT_EQ(cost.nodes[1].macs, 2 * 3 * 5 * 4);
    EXPECT_EQ(cost.totals.macs, 2'000 + 120);
    EXPECT_EQ(cost.totals.flops, 2 * 2'120);
}

TEST(CostModel, OtherOpsCountFlopsByTheStatedConventions) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{4}, std::int64_t{2}, std::int64_t{2}});
    g.weight("scale", {4}).weight("shift", {4}).weight("mean", {4}).weight("var", {4}).weight("row", {2});
    g.node("BatchNormalization", {"x", "scale", "shift", "mean", "var"}, {"bn"});
    g.node("Add", {"bn", "row"}, {"sum"});  // broadcast: 16 output elements
    g.node("Softmax", {"sum"}, {"sm"});
    g.node("LayerNormalization", {"x", "row", "row"}, {"ln"}, {{"axis", std::int64_t{-1}}});
    g.node("MaxPool", {"x"}, {"mp"}, {{"kernel_shape", Ints{2, 2}}});
    g.node("Reshape", {"x", "x"}, {"view"});  // unknown target: not inferred, counted as unknown
    const auto cost = cost_of(g);
    EXPECT_EQ(cost.nodes[0].flops, 2 * 16);
    EXPECT_EQ(cost.nodes[1].flops, 16);
    EXPECT_EQ(cost.nodes[2].flops, 3 * 16);
    EXPECT_EQ(cost.nodes[3].flops, 7 * 16);
    EXPECT_EQ(cost.nodes[4].flops, 4 * 4);  // 4 outputs x 4 kernel elements
    EXPECT_TRUE(cost.nodes[5].unknown);
    EXPECT_EQ(cost.totals.unknown_nodes, 1);
    EXPECT_EQ(cost.totals.macs, 0);
    EXPECT_EQ(cost_of(g, {.fold_batch_norm = true}).nodes[0].flops, 0);
    EXPECT_EQ(cost_of(g, {.fold_batch_norm = true}).nodes[0].bytes_read, 0);
}

TEST(CostModel, GatherReadsRowsAndViewsMoveNothing) {
    GraphFixture g;
    g.input("ids", {std::int64_t{2}, std::int64_t{5}}, onnx::DataType::int64).weight("table", {1000, 16});
    g.ints("flat", {-1});
    g.node("Gather", {"table", "ids"}, {"e"}).node("Reshape", {"e", "flat"}, {"v"});
    const auto cost = cost_of(g);
    EXPECT_EQ(cost.nodes[0].bytes_written, 2 * 5 * 16 * 4);
    EXPECT_EQ(cost.nodes[0].bytes_read, 2 * 5 * 16 * 4 + 2 * 5 * 8);  // rows + indices, not the 64 kB table
    EXPECT_EQ(cost.nodes[0].parameters, 16'000);
    EXPECT_EQ(cost.nodes[1].bytes_read + cost.nodes[1].bytes_written, 0);
    EXPECT_EQ(cost.histogram.at("Gather"), 1);
}

TEST(CostModel, UnknownOpsAreCountedNeverFatal) {
    GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{4}});
    g.node("NonMaxSuppressionPlus", {"x"}, {"y"}).node("Relu", {"y"}, {"z"});
    const auto cost = cost_of(g);
    EXPECT_EQ(cost.totals.unknown_nodes, 2);
    EXPECT_EQ(cost.histogram.at("NonMaxSuppressionPlus"), 1);
    EXPECT_EQ(cost.totals.flops, 0);
}

}  // namespace
}  // namespace inferbench::models

namespace inferbench::models {
namespace {

// The reference figures of real exports (torch.utils.flop_counter, and export_corpus.py's counter
// on older PyTorch) count 2 x the multiply-adds of convolutions and matrix products (batched
// attention included) and nothing else. Our MACs are the same multiply-adds, so 2 x totals.macs is
// the figure to compare; totals.flops adds every other op and is larger.
TEST(CostModel, TwiceTheMacsIsFlopCountersConvention) {
    GraphFixture g;
    g.input("x", {std::int64_t{2}, std::int64_t{8}, std::int64_t{16}, std::int64_t{16}});
    g.weight("w", {16, 4, 3, 3}).weight("fc", {16, 10});
    g.node("Conv", {"x", "w"}, {"c"}, {{"group", std::int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}});
    g.node("Relu", {"c"}, {"r"});
    g.node("Transpose", {"r"}, {"t"}, {{"perm", Ints{0, 2, 3, 1}}});  // [2, 16, 16, 16]
    g.node("MatMul", {"t", "t"}, {"attention"});                      // batched [2, 16] x [16, 16] x [16, 16]
    g.node("MatMul", {"t", "fc"}, {"logits"});
    const auto cost = cost_of(g);
    // flop_counter: conv = 2 x prod(out shape) x prod(w.shape[1:]); mm/bmm = 2 x prod(a[:-1]) x K x N.
    const std::int64_t conv = 2 * (2 * 16 * 16 * 16) * (4 * 3 * 3);
    const std::int64_t attention = 2 * (2 * 16 * 16) * 16 * 16;
    const std::int64_t logits = 2 * (2 * 16 * 16) * 16 * 10;
    EXPECT_EQ(2 * cost.totals.macs, conv + attention + logits);
    EXPECT_EQ(cost.totals.flops - 2 * cost.totals.macs, 2 * 16 * 16 * 16);  // the Relu, which flop_counter leaves out
}

}  // namespace
}  // namespace inferbench::models
