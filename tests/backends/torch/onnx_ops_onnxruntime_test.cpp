// The operators the zoo needed beyond the first models (3d-unet's ConvTranspose and
// InstanceNormalization), each on small one-node graphs through the interpreter and through ONNX
// Runtime: the same file, the same inputs, every attribute form the interpreter resolves itself.
#include <gtest/gtest.h>

#include <torch/types.h>

#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "backends/torch/onnxruntime_reference.hpp"
#include "common/scratch_dir.hpp"
#include "models/onnx_builder.hpp"

namespace inferbench::torch_onnx {
namespace {

using models::GraphBuilder;
using models::OnnxAttribute;
using models::OnnxDim;
using models::OnnxElemType;
using Ints = std::vector<std::int64_t>;

std::vector<OnnxDim> fixed_dims(const torch::Tensor& t) {
    std::vector<OnnxDim> dims;
    for (const std::int64_t d : t.sizes()) dims.push_back(OnnxDim::fixed(d));
    return dims;
}

// One node `op` reading the graph input "x" and the given constant tensors (initializers), with
// one output "y" of the input's rank (symbolic dims: ONNX Runtime infers them).
struct OneNode {
    std::string op;
    torch::Tensor x;
    std::vector<torch::Tensor> constants;
    std::vector<OnnxAttribute> attributes;
};

// max |interpreter - ONNX Runtime| / max(1, max |ONNX Runtime|); the shapes must agree.
double disagreement(const OneNode& n) {
    GraphBuilder g("op_" + n.op, 0);
    g.add_input("x", OnnxElemType::float32, fixed_dims(n.x));
    models::OnnxNode node{n.op, "node", {"x"}, {"y"}, n.attributes};
    for (std::size_t k = 0; k < n.constants.size(); ++k) {
        const torch::Tensor t = n.constants[k].contiguous();
        const std::string name = "c" + std::to_string(k);
        g.add_initializer({name, t.sizes().vec(), {t.data_ptr<float>(), t.data_ptr<float>() + t.numel()}, true});
        node.inputs.push_back(name);
    }
    g.add_node(std::move(node));
    std::vector<OnnxDim> out;
    for (std::int64_t d = 0; d < n.x.dim(); ++d) out.push_back(OnnxDim::symbolic("y" + std::to_string(d)));
    g.add_output("y", OnnxElemType::float32, out);

    const inferbench::testing::ScratchDir dir;
    const auto path = dir.path() / "op.onnx";
    std::ofstream(path, std::ios::binary) << g.serialize();
    const torch::Tensor ours = OnnxProgram::load(path).run({n.x}).at(0);
    const torch::Tensor theirs = ort_reference::run_onnxruntime(path, {n.x}).at(0);
    EXPECT_EQ(ours.sizes(), theirs.sizes()) << n.op;
    if (ours.sizes() != theirs.sizes()) return 1.0;
    return ort_reference::agreement(ours, theirs).error();
}

constexpr double kTolerance = 1e-5;

class ConvTransposeVsOnnxRuntime : public ::testing::Test {
protected:
    void SetUp() override { torch::manual_seed(5); }
};

// 3d-unet's form: kernel 2, stride 2, bias: each voxel becomes a 2x2x2 block.
TEST_F(ConvTransposeVsOnnxRuntime, ThreeDimensionalKernelTwoStrideTwoWithBias) {
    EXPECT_LT(
        disagreement({"ConvTranspose",
                      torch::randn({2, 4, 3, 3, 3}),
                      {torch::randn({4, 3, 2, 2, 2}), torch::randn({3})},
                      {OnnxAttribute::of_ints("kernel_shape", {2, 2, 2}), OnnxAttribute::of_ints("strides", {2, 2, 2}),
                       OnnxAttribute::of_ints("pads", {0, 0, 0, 0, 0, 0})}}),
        kTolerance);
}

// Equal pads and output_padding below the stride: LibTorch's own form.
TEST_F(ConvTransposeVsOnnxRuntime, SymmetricPadsAndOutputPadding) {
    EXPECT_LT(disagreement({"ConvTranspose",
                            torch::randn({1, 3, 5, 4}),
                            {torch::randn({3, 2, 3, 3}), torch::randn({2})},
                            {OnnxAttribute::of_ints("strides", {2, 2}), OnnxAttribute::of_ints("pads", {1, 1, 1, 1}),
                             OnnxAttribute::of_ints("output_padding", {1, 0})}}),
              kTolerance);
}

// Unequal begin and end pads: the full result cropped, then the bias.
TEST_F(ConvTransposeVsOnnxRuntime, AsymmetricPads) {
    EXPECT_LT(disagreement({"ConvTranspose",
                            torch::randn({2, 2, 4, 4}),
                            {torch::randn({2, 3, 3, 3}), torch::randn({3})},
                            {OnnxAttribute::of_ints("strides", {2, 2}), OnnxAttribute::of_ints("pads", {0, 2, 1, 0})}}),
              kTolerance);
}

TEST_F(ConvTransposeVsOnnxRuntime, GroupsAndDilations) {
    EXPECT_LT(disagreement({"ConvTranspose",
                            torch::randn({1, 4, 5, 5}),
                            {torch::randn({4, 3, 3, 3})},
                            {OnnxAttribute::of_int("group", 2), OnnxAttribute::of_ints("dilations", {2, 2}),
                             OnnxAttribute::of_ints("strides", {1, 2})}}),
              kTolerance);
}

// output_shape fixes the output; the pads follow from it (the odd one at the start).
TEST_F(ConvTransposeVsOnnxRuntime, OutputShapeGivesThePads) {
    EXPECT_LT(
        disagreement({"ConvTranspose",
                      torch::randn({1, 2, 4, 3}),
                      {torch::randn({2, 2, 3, 3}), torch::randn({2})},
                      {OnnxAttribute::of_ints("strides", {2, 2}), OnnxAttribute::of_ints("output_shape", {8, 7})}}),
        kTolerance);
}

// SAME_UPPER and SAME_LOWER: output = input * stride, the odd pad at the end or at the start.
TEST_F(ConvTransposeVsOnnxRuntime, AutoPadSame) {
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER"}) {
        EXPECT_LT(
            disagreement({"ConvTranspose",
                          torch::randn({1, 2, 3, 4}),
                          {torch::randn({2, 2, 3, 3})},
                          {OnnxAttribute::of_ints("strides", {2, 2}), OnnxAttribute::of_string("auto_pad", mode)}}),
            kTolerance)
            << mode;
    }
}

// 3d-unet's form: per sample and channel over the volume, then the affine scale and bias.
TEST(InstanceNormalizationVsOnnxRuntime, ThreeDimensionalWithScaleAndBias) {
    torch::manual_seed(6);
    EXPECT_LT(disagreement({"InstanceNormalization",
                            torch::randn({2, 3, 4, 5, 6}),
                            {torch::rand({3}) + 0.5, torch::randn({3})},
                            {OnnxAttribute::of_float("epsilon", 1e-5F)}}),
              kTolerance);
}

// Both runtimes normalise in the fused form x * s + (bias - mean * s), s = scale / sqrt(var + eps):
// where |x| * s is large against the output, the two products cancel and leave their rounding,
// ~2^-24 |x| s, which each runtime rounds its own way. The two cases below are such inputs; the
// tolerance is that bound (1.3e-4 and 3.7e-5 for their values), not an error of either runtime.
constexpr double kCancellationTolerance = 1e-4;

// Large means and small spreads (what a ReLU network's activations can look like), a larger epsilon.
TEST(InstanceNormalizationVsOnnxRuntime, TwoDimensionalOffsetInputs) {
    torch::manual_seed(7);
    const torch::Tensor x =
        torch::randn({2, 4, 6, 6}) * 0.1 + torch::arange(4, torch::kFloat).reshape({1, 4, 1, 1}) * 50;
    EXPECT_LT(disagreement({"InstanceNormalization",
                            x,
                            {torch::rand({4}) + 0.5, torch::randn({4})},
                            {OnnxAttribute::of_float("epsilon", 1e-3F)}}),
              kCancellationTolerance);
}

// One voxel per channel (3d-unet's bottleneck at a 32^3 input): the variance is 0, the output the
// bias, within the cancellation bound (s = scale / sqrt(eps)).
TEST(InstanceNormalizationVsOnnxRuntime, SingleElementPerChannel) {
    torch::manual_seed(8);
    EXPECT_LT(disagreement({"InstanceNormalization",
                            torch::randn({2, 3, 1, 1, 1}),
                            {torch::rand({3}) + 0.5, torch::randn({3})},
                            {OnnxAttribute::of_float("epsilon", 1e-5F)}}),
              kCancellationTolerance);
}

}  // namespace
}  // namespace inferbench::torch_onnx
