// The interpreter op by op, against hand-computed values or LibTorch's reference functions, on
// one-node models; constant inputs (read at load) and run-time inputs both.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "backends/torch/onnx_test_graphs.hpp"

namespace inferbench::torch_onnx {
namespace {

using namespace test_graphs;  // NOLINT(google-build-using-namespace): the test vocabulary
using Attribute = std::pair<std::string, onnx::OnnxAttributeValue>;

::testing::AssertionResult close(const torch::Tensor& actual, const torch::Tensor& expected, double tolerance = 1e-5) {
    if (actual.sizes() != expected.sizes()) {
        return ::testing::AssertionFailure() << "shape " << actual.sizes() << ", expected " << expected.sizes();
    }
    if (torch::allclose(actual.to(torch::kDouble), expected.to(torch::kDouble), tolerance, tolerance)) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "\n" << actual << "\nexpected\n" << expected;
}

Attribute ints_attr(std::string name, Ints values) { return {std::move(name), std::move(values)}; }
Attribute int_attr(std::string name, std::int64_t value) { return {std::move(name), value}; }
Attribute float_attr(std::string name, float value) { return {std::move(name), value}; }
Attribute string_attr(std::string name, std::string value) { return {std::move(name), std::move(value)}; }

TEST(OnnxOps, ConvWithStridesPadsGroupsAndBias) {
    const torch::Tensor x = iota({1, 1, 3, 3}) + 1;  // 1..9
    EXPECT_TRUE(
        close(run({"Conv", {in(x), init(torch::ones({1, 1, 2, 2}))}}), floats({12, 16, 24, 28}).reshape({1, 1, 2, 2})));

    const torch::Tensor x4 = torch::randn({2, 4, 7, 7});
    const torch::Tensor w = torch::randn({4, 2, 3, 3});
    const torch::Tensor b = torch::randn({4});
    const torch::Tensor reference = torch::conv2d(x4, w, b, {2, 2}, {1, 1}, {1, 1}, 2);
    EXPECT_TRUE(close(run({"Conv",
                           {in(x4), init(w), init(b)},
                           {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1}), int_attr("group", 2),
                            ints_attr("kernel_shape", {3, 3}), ints_attr("dilations", {1, 1})}}),
                      reference, 1e-4));
    // Dilation, and the weight as a run-time input.
    EXPECT_TRUE(close(run({"Conv", {in(x4), in(w)}, {ints_attr("dilations", {2, 2}), int_attr("group", 2)}}),
                      torch::conv2d(x4, w, torch::Tensor(), Ints{1, 1}, Ints{0, 0}, Ints{2, 2}, 2), 1e-4));
}

TEST(OnnxOps, ConvAsymmetricAndAutoPads) {
    const torch::Tensor x = torch::randn({1, 2, 4, 4});
    const torch::Tensor w = torch::randn({3, 2, 3, 3});
    // pads = [top, left, bottom, right]: only after, as LibTorch cannot express.
    EXPECT_TRUE(close(run({"Conv", {in(x), init(w)}, {ints_attr("pads", {0, 0, 1, 1})}}),
                      torch::conv2d(torch::constant_pad_nd(x, {0, 1, 0, 1}), w), 1e-4));
    // SAME_UPPER, stride 2 on 4: output 2, total pad 1, at the end; SAME_LOWER puts it first.
    const std::vector<Attribute> upper{string_attr("auto_pad", "SAME_UPPER"), ints_attr("strides", {2, 2})};
    EXPECT_TRUE(close(run({"Conv", {in(x), init(w)}, upper}),
                      torch::conv2d(torch::constant_pad_nd(x, {0, 1, 0, 1}), w, torch::Tensor(), 2), 1e-4));
    const std::vector<Attribute> lower{string_attr("auto_pad", "SAME_LOWER"), ints_attr("strides", {2, 2})};
    EXPECT_TRUE(close(run({"Conv", {in(x), init(w)}, lower}),
                      torch::conv2d(torch::constant_pad_nd(x, {1, 0, 1, 0}), w, torch::Tensor(), 2), 1e-4));
}

// x = [1, 2], w = [1, 10, 100], stride 2: each input scatters w at 2 * i, overlaps add up.
TEST(OnnxOps, ConvTransposeScattersThenCropsOrExtends) {
    const torch::Tensor x = floats({1, 2}).reshape({1, 1, 2});
    const torch::Tensor w = floats({1, 10, 100}).reshape({1, 1, 3});
    const auto y = [](std::initializer_list<float> v) { return floats(v).reshape({1, 1, -1}); };
    const Attribute stride = ints_attr("strides", {2});
    EXPECT_TRUE(close(run({"ConvTranspose", {in(x), init(w)}, {stride}}), y({1, 10, 102, 20, 200})));
    // Pads crop (here the first element only), output_padding extends with zeros, then the bias.
    EXPECT_TRUE(
        close(run({"ConvTranspose", {in(x), init(w)}, {stride, ints_attr("pads", {1, 0})}}), y({10, 102, 20, 200})));
    EXPECT_TRUE(close(
        run({"ConvTranspose", {in(x), init(w), init(floats({0.5F}))}, {stride, ints_attr("output_padding", {1})}}),
        y({1.5F, 10.5F, 102.5F, 20.5F, 200.5F, 0.5F})));
    // output_shape 4: total pad 1, at the start (not SAME_UPPER).
    EXPECT_TRUE(close(run({"ConvTranspose", {in(x), init(w)}, {stride, ints_attr("output_shape", {4})}}),
                      y({10, 102, 20, 200})));
    // 3-D, kernel = stride = 2 (3d-unet's upsampling): each voxel becomes a 2x2x2 block.
    const torch::Tensor x3 = torch::randn({2, 3, 2, 2, 2});
    const torch::Tensor w3 = torch::randn({3, 4, 2, 2, 2});
    EXPECT_TRUE(close(run({"ConvTranspose", {in(x3), init(w3)}, {ints_attr("strides", {2, 2, 2})}}),
                      torch::conv_transpose3d(x3, w3, {}, 2), 1e-4));
}

// Per sample and channel: [1, 2, 3, 4] has mean 2.5 and variance 1.25; a constant channel gives
// the bias (0 / sqrt(epsilon)), up to the rounding of LibTorch's fused x * s + (bias - mean * s).
TEST(OnnxOps, InstanceNormalizationNormalisesEachChannel) {
    const float eps = 1e-2F;
    const torch::Tensor x = torch::cat({floats({1, 2, 3, 4}), floats({5, 5, 5, 5})}).reshape({1, 2, 4});
    const torch::Tensor normalised = (floats({1, 2, 3, 4}) - 2.5) / std::sqrt(1.25F + eps);
    const torch::Tensor expected = torch::cat({normalised * 2 + 1, floats({-1, -1, -1, -1})}).reshape({1, 2, 4});
    EXPECT_TRUE(close(run({"InstanceNormalization",
                           {in(x), init(floats({2, 3})), init(floats({1, -1}))},
                           {float_attr("epsilon", eps)}}),
                      expected, 1e-4));
}

TEST(OnnxOps, BatchNormalizationUsesRunningStatistics) {
    const torch::Tensor x = iota({2, 2, 1, 2});
    const torch::Tensor scale = floats({1.0F, 2.0F}), bias = floats({0.5F, -1.0F});
    const torch::Tensor mean = floats({1.0F, 3.0F}), var = floats({4.0F, 0.25F});
    const float eps = 1e-3F;
    const torch::Tensor expected =
        (x - mean.view({1, 2, 1, 1})) / torch::sqrt(var.view({1, 2, 1, 1}) + eps) * scale.view({1, 2, 1, 1}) +
        bias.view({1, 2, 1, 1});
    EXPECT_TRUE(close(run({"BatchNormalization",
                           {in(x), init(scale), init(bias), init(mean), init(var)},
                           {float_attr("epsilon", eps)}}),
                      expected));
}

TEST(OnnxOps, ReluAndClip) {
    const torch::Tensor x = floats({-3, -0.5F, 0, 2, 7});
    EXPECT_TRUE(close(run({"Relu", {in(x)}}), floats({0, 0, 0, 2, 7})));
    EXPECT_TRUE(
        close(run({"Clip", {in(x), init(torch::tensor(0.0F)), init(torch::tensor(6.0F))}}), floats({0, 0, 0, 2, 6})));
    EXPECT_TRUE(close(run({"Clip", {in(x), none(), init(torch::tensor(1.0F))}}), floats({-3, -0.5F, 0, 1, 1})));
    EXPECT_TRUE(close(run({"Clip", {in(x), in(torch::tensor(-1.0F))}}), floats({-1, -0.5F, 0, 2, 7})));
    EXPECT_TRUE(close(run({"Clip", {in(x)}}), x));  // no bounds: unbounded
    EXPECT_TRUE(close(run({"Clip", {in(x)}, {float_attr("min", -1), float_attr("max", 1)}, 1, 6}),
                      floats({-1, -0.5F, 0, 1, 1})));  // opset 6: attributes
}

TEST(OnnxOps, ArithmeticBroadcasts) {
    const torch::Tensor a = iota({2, 3});
    const torch::Tensor b = floats({1, 2, 4});
    EXPECT_TRUE(close(run({"Add", {in(a), init(b)}}), floats({1, 3, 6, 4, 6, 9}).reshape({2, 3})));
    EXPECT_TRUE(close(run({"Sub", {in(a), in(b)}}), floats({-1, -1, -2, 2, 2, 1}).reshape({2, 3})));
    EXPECT_TRUE(close(run({"Mul", {init(b), in(a)}}), floats({0, 2, 8, 3, 8, 20}).reshape({2, 3})));
    EXPECT_TRUE(close(run({"Div", {in(a), in(b)}}), floats({0, 0.5F, 0.5F, 3, 2, 1.25F}).reshape({2, 3})));
    // Integer division truncates toward zero.
    EXPECT_TRUE(torch::equal(run({"Div", {in(ints({-7, 7, -1})), in(ints({2, 2, 3}))}}), ints({-3, 3, 0})));
    EXPECT_TRUE(close(run({"Pow", {in(b), init(torch::tensor(2.0F))}}), floats({1, 4, 16})));
    EXPECT_TRUE(close(run({"Pow", {in(b), init(torch::tensor(0.5F))}}), torch::sqrt(b)));
    EXPECT_TRUE(close(run({"Pow", {in(b), in(floats({3, 1, 0.5F}))}}), floats({1, 2, 2})));
}

TEST(OnnxOps, UnaryFunctions) {
    const torch::Tensor x = floats({-2, -0.5F, 0, 0.5F, 3});
    EXPECT_TRUE(close(run({"Sigmoid", {in(x)}}), 1 / (1 + torch::exp(-x))));
    EXPECT_TRUE(close(run({"Tanh", {in(x)}}), torch::tanh(x)));
    EXPECT_TRUE(close(run({"Erf", {in(floats({0, 0.5F, -1}))}}), floats({0, 0.5204999F, -0.8427008F})));
    EXPECT_TRUE(close(run({"Sqrt", {in(floats({0, 4, 2}))}}), floats({0, 2, std::sqrt(2.0F)})));
    EXPECT_TRUE(close(run({"Gelu", {in(x)}}), 0.5 * x * (1 + torch::erf(x / std::sqrt(2.0)))));
    EXPECT_TRUE(close(run({"Gelu", {in(x)}, {string_attr("approximate", "tanh")}}),
                      0.5 * x * (1 + torch::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)))));
    EXPECT_TRUE(close(run({"LeakyRelu", {in(x)}, {float_attr("alpha", 0.1F)}}), floats({-0.2F, -0.05F, 0, 0.5F, 3})));
}

TEST(OnnxOps, Pooling) {
    const torch::Tensor x = iota({1, 1, 4, 4}) + 1;  // 1..16
    const std::vector<Attribute> k2s2{ints_attr("kernel_shape", {2, 2}), ints_attr("strides", {2, 2})};
    EXPECT_TRUE(close(run({"MaxPool", {in(x)}, k2s2}), floats({6, 8, 14, 16}).reshape({1, 1, 2, 2})));
    EXPECT_TRUE(close(run({"AveragePool", {in(x)}, k2s2}), floats({3.5F, 5.5F, 11.5F, 13.5F}).reshape({1, 1, 2, 2})));
    EXPECT_TRUE(close(run({"GlobalAveragePool", {in(x)}}), torch::full({1, 1, 1, 1}, 8.5F)));

    // Pads only at the end: max pads with -inf, average counts only real elements unless told.
    const torch::Tensor y = floats({1, 2, 3, 4}).reshape({1, 1, 2, 2});
    const std::vector<Attribute> end_pad{ints_attr("kernel_shape", {2, 2}), ints_attr("pads", {0, 0, 1, 1})};
    EXPECT_TRUE(close(run({"MaxPool", {in(-y)}, end_pad}), floats({-1, -2, -3, -4}).reshape({1, 1, 2, 2})));
    EXPECT_TRUE(close(run({"AveragePool", {in(y)}, end_pad}), floats({2.5F, 3, 3.5F, 4}).reshape({1, 1, 2, 2})));
    std::vector<Attribute> counting = end_pad;
    counting.push_back(int_attr("count_include_pad", 1));
    EXPECT_TRUE(close(run({"AveragePool", {in(y)}, counting}), floats({2.5F, 1.5F, 1.75F, 1}).reshape({1, 1, 2, 2})));
    // Symmetric pads LibTorch handles itself: the corner averages 4 real elements, or 9 with the pads.
    const std::vector<Attribute> same{ints_attr("kernel_shape", {3, 3}), ints_attr("pads", {1, 1, 1, 1})};
    EXPECT_FLOAT_EQ(run({"AveragePool", {in(x)}, same})[0][0][0][0].item<float>(), (1 + 2 + 5 + 6) / 4.0F);
}

TEST(OnnxOps, FlattenReshapeTransposeConcat) {
    const torch::Tensor x = iota({2, 3, 4});
    EXPECT_EQ(run({"Flatten", {in(x)}}).sizes(), (Ints{2, 12}));
    EXPECT_EQ(run({"Flatten", {in(x)}, {int_attr("axis", 0)}}).sizes(), (Ints{1, 24}));
    EXPECT_EQ(run({"Flatten", {in(x)}, {int_attr("axis", -1)}}).sizes(), (Ints{6, 4}));
    EXPECT_TRUE(torch::equal(run({"Reshape", {in(x), init(ints({0, -1}))}}), x.reshape({2, 12})));
    EXPECT_TRUE(torch::equal(run({"Reshape", {in(x), in(ints({4, 0, 2}))}}), x.reshape({4, 3, 2})));
    EXPECT_TRUE(torch::equal(run({"Transpose", {in(x)}, {ints_attr("perm", {0, 2, 1})}}), x.permute({0, 2, 1})));
    EXPECT_TRUE(torch::equal(run({"Transpose", {in(x)}}), x.permute({2, 1, 0})));
    EXPECT_TRUE(torch::equal(run({"Concat", {in(x), init(x)}, {int_attr("axis", 1)}}), torch::cat({x, x}, 1)));
    EXPECT_TRUE(torch::equal(run({"Identity", {in(x)}}), x));
}

TEST(OnnxOps, GemmAndMatMul) {
    const torch::Tensor a = iota({2, 3});
    const torch::Tensor w = iota({4, 3}) - 5;
    const torch::Tensor c = floats({1, -1, 2, 0});
    EXPECT_TRUE(close(run({"Gemm", {in(a), init(w), init(c)}, {int_attr("transB", 1)}}), a.mm(w.t()) + c));
    EXPECT_TRUE(close(run({"Gemm",
                           {in(a.t()), in(w.t()), in(c.view({1, 4}))},
                           {int_attr("transA", 1), float_attr("alpha", 0.5F), float_attr("beta", 2.0F)}}),
                      0.5 * a.mm(w.t()) + 2 * c));
    EXPECT_TRUE(close(run({"Gemm", {in(a), in(w.t())}}), a.mm(w.t())));
    const torch::Tensor batched = iota({2, 2, 3});
    EXPECT_TRUE(close(run({"MatMul", {in(batched), init(w.t())}}), torch::matmul(batched, w.t())));
    EXPECT_TRUE(close(run({"MatMul", {in(floats({1, 2}).view({1, 2})), in(floats({3, 4}).view({2, 1}))}}),
                      torch::full({1, 1}, 11.0F)));
}

TEST(OnnxOps, SoftmaxByOpset) {
    const torch::Tensor x = torch::randn({2, 3, 4});
    EXPECT_TRUE(close(run({"Softmax", {in(x)}}), torch::softmax(x, -1)));
    EXPECT_TRUE(close(run({"Softmax", {in(x)}, {int_attr("axis", 1)}}), torch::softmax(x, 1)));
    // Before opset 13: flattened to 2-D at the axis (default 1), normalized over each row.
    EXPECT_TRUE(close(run({"Softmax", {in(x)}, {}, 1, 11}), torch::softmax(x.reshape({2, 12}), 1).reshape({2, 3, 4})));
}

TEST(OnnxOps, LayerNormalizationAndReduceMean) {
    const torch::Tensor x = torch::randn({2, 3, 4});
    const torch::Tensor scale = torch::randn({4}), bias = torch::randn({4});
    const torch::Tensor mean = x.mean(-1, true);
    const torch::Tensor var = (x - mean).pow(2).mean(-1, true);
    EXPECT_TRUE(close(run({"LayerNormalization", {in(x), init(scale), init(bias)}, {float_attr("epsilon", 1e-5F)}}),
                      (x - mean) / torch::sqrt(var + 1e-5) * scale + bias, 1e-4));
    EXPECT_TRUE(close(run({"ReduceMean", {in(x)}, {ints_attr("axes", {-1})}, 1, 13}), mean));
    EXPECT_TRUE(
        close(run({"ReduceMean", {in(x), init(ints({0, 2}))}, {int_attr("keepdims", 0)}, 1, 18}), x.mean(Ints{0, 2})));
    EXPECT_TRUE(close(run({"ReduceMean", {in(x)}, {}, 1, 18}), x.mean({0, 1, 2}, true)));
}

TEST(OnnxOps, LayerNormalizationOfATransposedViewNormalizesInPlaceOfACopy) {
    // A sequence-first view of batch-first activations: normalized on the dense tensor behind it, the
    // result the same view of it.
    const torch::Tensor dense = torch::randn({2, 5, 8});
    const torch::Tensor view = dense.transpose(0, 1);
    const torch::Tensor scale = torch::rand({8}) + 0.5;
    const torch::Tensor bias = torch::randn({8});
    const torch::Tensor y = run({"LayerNormalization", {in(view), init(scale), init(bias)}, {float_attr("epsilon", 1e-5F)}});
    EXPECT_TRUE(close(y, torch::layer_norm(view.contiguous(), {8}, scale, bias, 1e-5), 1e-5));
    EXPECT_TRUE(y.transpose(0, 1).is_contiguous());
}

TEST(OnnxOps, ConstantShapeGather) {
    const torch::Tensor value = iota({2, 2});
    onnx::OnnxModel m = model_of({"Constant", {}, {{"value", to_onnx("v", value)}}});
    EXPECT_TRUE(torch::equal(OnnxProgram::from_model(m, "c.onnx").run({}).at(0), value));
    EXPECT_TRUE(torch::equal(run({"Constant", {}, {{"value_ints", Ints{3, 4}}}}), ints({3, 4})));

    const torch::Tensor x = torch::zeros({2, 3, 4});
    EXPECT_TRUE(torch::equal(run({"Shape", {in(x)}}), ints({2, 3, 4})));
    EXPECT_TRUE(torch::equal(run({"Shape", {in(x)}, {int_attr("start", 1), int_attr("end", -1)}, 1, 15}), ints({3})));

    const torch::Tensor data = iota({3, 4});
    EXPECT_TRUE(torch::equal(run({"Gather", {in(data), init(torch::tensor(-1, torch::kLong))}}), data[2]));
    EXPECT_TRUE(torch::equal(run({"Gather", {in(data), in(ints({2, 0}).view({1, 2}))}, {int_attr("axis", 1)}}),
                             data.index_select(1, ints({2, 0})).view({3, 1, 2})));
}

TEST(OnnxOps, GatherWithConstantConsecutiveIndicesIsAViewOfItsInput) {
    // nn.MultiheadAttention's export takes Q, K and V as Gather(qkv, 0 / 1 / 2): a view, as PyTorch's
    // qkv[0] is, not a copy.
    const torch::Tensor qkv = iota({3, 2, 4});
    const auto same_storage = [&](const torch::Tensor& y) { return y.storage().data() == qkv.storage().data(); };
    for (const std::int64_t i : {0, 2, -1}) {
        const torch::Tensor y = run_all({"Gather", {in(qkv), init(torch::tensor(i, torch::kLong))}}).at(0);
        EXPECT_TRUE(torch::equal(y, qkv[i < 0 ? i + 3 : i]));
        EXPECT_TRUE(same_storage(y));
    }
    const torch::Tensor range = run({"Gather", {in(qkv), init(ints({1, 2, 3}))}, {int_attr("axis", 2)}});
    EXPECT_TRUE(torch::equal(range, qkv.narrow(2, 1, 3)));
    const torch::Tensor from_the_end = run({"Gather", {in(qkv), init(ints({-2, -1}))}, {int_attr("axis", 1)}});
    EXPECT_TRUE(torch::equal(from_the_end, qkv));
    // Not consecutive, or not constant: a gathered copy.
    EXPECT_TRUE(torch::equal(run({"Gather", {in(qkv), init(ints({2, 0}))}}), qkv.index_select(0, ints({2, 0}))));
    EXPECT_TRUE(torch::equal(run({"Gather", {in(qkv), in(torch::tensor(1, torch::kLong))}}), qkv[1]));
    EXPECT_THROW(run({"Gather", {in(qkv), init(torch::tensor(3, torch::kLong))}}), std::exception);
    EXPECT_THROW(run({"Gather", {in(qkv), init(ints({-4}))}}), std::exception);
}

TEST(OnnxOps, UnsqueezeSqueezeSliceExpand) {
    const torch::Tensor x = iota({2, 3});
    EXPECT_EQ(run({"Unsqueeze", {in(x), init(ints({0, -1}))}}).sizes(), (Ints{1, 2, 3, 1}));
    EXPECT_EQ(run({"Unsqueeze", {in(x)}, {ints_attr("axes", {1})}, 1, 11}).sizes(), (Ints{2, 1, 3}));
    const torch::Tensor ones = torch::zeros({1, 3, 1});
    EXPECT_EQ(run({"Squeeze", {in(ones), init(ints({2}))}}).sizes(), (Ints{1, 3}));
    EXPECT_EQ(run({"Squeeze", {in(ones)}}).sizes(), (Ints{3}));

    const torch::Tensor y = iota({4, 5});
    const std::int64_t max = std::numeric_limits<std::int64_t>::max();
    EXPECT_TRUE(
        torch::equal(run({"Slice", {in(y), init(ints({1})), init(ints({max})), init(ints({1}))}}), y.slice(1, 1)));
    EXPECT_TRUE(torch::equal(
        run({"Slice", {in(y), in(ints({-1, 0})), in(ints({-100, 5})), init(ints({0, 1})), init(ints({-2, 2}))}}),
        y.index_select(0, ints({3, 1})).slice(1, 0, 5, 2)));
    EXPECT_TRUE(torch::equal(run({"Expand", {in(floats({1, 2, 3}).view({3, 1})), init(ints({2, 1, 4}))}}),
                             floats({1, 2, 3}).view({3, 1}).expand({2, 3, 4})));
}

TEST(OnnxOps, CastWhereEqual) {
    EXPECT_TRUE(torch::equal(run({"Cast", {in(floats({1.7F, -1.7F}))}, {int_attr("to", 7)}}), ints({1, -1})));
    EXPECT_TRUE(torch::equal(run({"Cast", {in(ints({3}))}, {int_attr("to", 1)}}), floats({3})));
    const torch::Tensor eq = run({"Equal", {in(ints({1, 2, 3})), init(ints({1, 0, 3}))}});
    EXPECT_TRUE(torch::equal(eq, torch::tensor({true, false, true})));
    EXPECT_TRUE(
        torch::equal(run({"Where", {in(eq), in(floats({1, 2, 3})), init(torch::tensor(0.0F))}}), floats({1, 0, 3})));
}

TEST(OnnxOps, ResizeNearestAndLinear) {
    const torch::Tensor x = floats({1, 2, 3, 4}).reshape({1, 1, 2, 2});
    const std::vector<Attribute> nearest{string_attr("mode", "nearest"),
                                         string_attr("coordinate_transformation_mode", "asymmetric"),
                                         string_attr("nearest_mode", "floor")};
    const torch::Tensor expected = floats({1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}).reshape({1, 1, 4, 4});
    EXPECT_TRUE(torch::equal(run({"Resize", {in(x), none(), init(floats({1, 1, 2, 2}))}, nearest}), expected));
    EXPECT_TRUE(torch::equal(run({"Resize", {in(x), none(), none(), in(ints({1, 1, 4, 4}))}, nearest}), expected));
    const std::vector<Attribute> linear{string_attr("mode", "linear"),
                                        string_attr("coordinate_transformation_mode", "align_corners")};
    EXPECT_TRUE(close(run({"Resize", {in(x), none(), none(), init(ints({1, 1, 3, 3}))}, linear}),
                      floats({1, 1.5F, 2, 2, 2.5F, 3, 3, 3.5F, 4}).reshape({1, 1, 3, 3})));
}

TEST(OnnxOps, SplitEquallyOrBySizes) {
    const torch::Tensor x = iota({2, 6});
    const auto parts = run_all({"Split", {in(x)}, {int_attr("axis", 1)}, 3});
    ASSERT_EQ(parts.size(), 3U);
    EXPECT_TRUE(torch::equal(parts[2], x.slice(1, 4, 6)));
    const auto sized = run_all({"Split", {in(x), init(ints({1, 5}))}, {int_attr("axis", -1)}, 2});
    EXPECT_EQ(sized[1].sizes(), (Ints{2, 5}));
    const auto old = run_all({"Split", {in(x)}, {ints_attr("split", {1, 1}), int_attr("axis", 0)}, 2, 11});
    EXPECT_TRUE(torch::equal(old[1], x.slice(0, 1, 2)));
}

}  // namespace
}  // namespace inferbench::torch_onnx
