// `models inspect` on shapes whose sizes do not fit 64 bits: refused with the input named, never 0 FLOPs.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/splitmix64.hpp"
#include "graph_fixture.hpp"
#include "models/cost_model.hpp"
#include "models/inference_cost.hpp"
#include "models/onnx_builder.hpp"

namespace inferbench::models {
namespace {

constexpr std::int64_t k2to62 = std::int64_t{1} << 62;
constexpr std::int64_t k2to31 = std::int64_t{1} << 31;

// A file with one Relu over input x of `dims` after the batch, written as the zoo writes models.
std::filesystem::path relu_file(const std::filesystem::path& folder, std::vector<std::int64_t> dims) {
    GraphBuilder g("big", 1);
    std::vector<OnnxDim> shape = {OnnxDim::symbolic("N")};
    for (const auto d : dims) shape.push_back(OnnxDim::fixed(d));
    g.add_input("x", OnnxElemType::float32, shape);
    g.add_node({"Relu", "relu", {"x"}, {"y"}, {}});
    g.add_output("y", OnnxElemType::float32, shape);
    const auto file = folder / "big.onnx";
    std::ofstream(file, std::ios::binary) << g.serialize();
    return file;
}

std::string user_error(const std::filesystem::path& file, std::int64_t batch) {
    try {
        const auto cost = batch_cost(file, batch);
        return "no error, " + std::to_string(cost.cost.totals.flops) + " FLOPs";
    } catch (const UserError& e) {
        return e.what();
    }
}

TEST(ShapeSizes, AnInputWhoseBytesWrapIsOutOfRangeNotZeroFlops) {
    inferbench::testing::ScratchDir scratch;
    EXPECT_EQ(user_error(relu_file(scratch.path(), {k2to62 + 16}), 1),
              "input 'x' has shape [1, 4611686018427387920]: 4611686018427387920 elements of 4 bytes are more than "
              "274877906944 bytes; the shape in the file is out of range (inferbench feeds at most 256 GiB per tensor "
              "and per cell)");
    EXPECT_EQ(user_error(relu_file(scratch.path(), {k2to31, k2to31}), 2),
              "input 'x' has shape [2, 2147483648, 2147483648]: its element count overflows a 64-bit integer; the shape "
              "in the file is out of range (inferbench feeds at most 256 GiB per tensor and per cell)");
    EXPECT_EQ(user_error(relu_file(scratch.path(), {3, 4}), 2), "no error, 24 FLOPs");
}

TEST(ShapeSizes, AComputedShapeThatOverflowsNamesItsNode) {
    testing::GraphFixture g;
    g.input("x", {std::int64_t{1}, std::int64_t{1} << 20});
    g.ints("repeats", {1, std::int64_t{1} << 40});
    g.node("Tile", {"x", "repeats"}, {"t"});  // [1, 2^60]: a count that fits, bytes that do not
    g.node("Relu", {"t"}, {"y"});
    try {
        estimate_cost(g.model, infer_shapes(g.model));
        FAIL() << "no error";
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("node t (Tile): a value of shape [1, 1152921504606846976] has more "
                                              "elements or bytes than a 64-bit count holds",
                                              0),
                  0u)
            << e.what();
    }
}

// Random and adversarial shapes through shape inference and the cost model: each gives figures or a UserError,
// never a crash or a signed overflow (the sanitizer build checks the latter).
TEST(ShapeSizes, RandomShapesThroughInferenceAndCostGiveFiguresOrARefusal) {
    SplitMix64 rng(62);
    const std::int64_t edges[] = {0, 1, 8, k2to31, k2to62 + 16, std::numeric_limits<std::int64_t>::max()};
    int refused = 0;
    int costed = 0;
    for (int round = 0; round < 2000; ++round) {
        const auto dim = [&] {
            return rng.next() % 3 == 0 ? edges[rng.next() % std::size(edges)]
                                       : static_cast<std::int64_t>(rng.next() >> (33 + rng.next() % 31));
        };
        testing::GraphFixture g;
        g.input("x", {dim(), dim(), dim()});
        g.weight("w", {std::int64_t{8}, std::int64_t{4}});
        g.ints("repeats", {dim() % 4096 + 1, 1, dim() % 4096 + 1});
        g.ints("target", {-1, dim() % 64 + 1});
        g.node("Relu", {"x"}, {"r"});
        g.node("Softmax", {"r"}, {"s"});
        g.node("Tile", {"s", "repeats"}, {"t"});
        g.node("Reshape", {"t", "target"}, {"u"});
        g.node("ReduceMean", {"u"}, {"m"});
        try {
            const ModelCost cost = estimate_cost(g.model, infer_shapes(g.model));
            EXPECT_GE(cost.totals.flops, 0);
            EXPECT_GE(cost.totals.bytes_read, 0);
            ++costed;
        } catch (const UserError&) {
            ++refused;
        }
    }
    EXPECT_GT(refused, 0);
    EXPECT_GT(costed, 0);
}

}  // namespace
}  // namespace inferbench::models
