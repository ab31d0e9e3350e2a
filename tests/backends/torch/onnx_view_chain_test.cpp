// apply_view_chain against the steps one by one: the same values for random chains on dense and
// transposed inputs, and a view (no copy) for the attention head split of a sequence-first view.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "backends/torch/onnx_interpreter/onnx_view_chain.hpp"

namespace inferbench::torch_onnx {
namespace {

using Ints = std::vector<std::int64_t>;
using Kind = ViewStep::Kind;

torch::Tensor step_by_step(torch::Tensor x, const std::vector<ViewStep>& steps) {
    for (const ViewStep& s : steps) x = s.kind == Kind::permute ? x.permute(s.values) : x.reshape(s.values);
    return x;
}

bool shares_storage(const torch::Tensor& a, const torch::Tensor& b) { return a.storage().data() == b.storage().data(); }

TEST(ViewChain, HeadSplitOfASequenceFirstViewIsAView) {
    // [B, L, E] activations seen as [L, B, E]; heads split to [L, B * H, d], then [B * H, L, d], then [B, H, L, d].
    const std::int64_t b = 3, l = 5, h = 4, d = 2;
    const torch::Tensor dense = torch::randn({b, l, h * d});
    const torch::Tensor x = dense.transpose(0, 1);
    const std::vector<ViewStep> steps = {{Kind::reshape, {l, b * h, d}}, {Kind::permute, {1, 0, 2}}, {Kind::reshape, {b, h, l, d}}};
    const auto y = apply_view_chain(x, steps);
    ASSERT_TRUE(y.has_value());
    EXPECT_TRUE(torch::equal(*y, step_by_step(x, steps)));
    EXPECT_TRUE(shares_storage(*y, dense));
    EXPECT_FALSE(shares_storage(step_by_step(x, steps), dense));  // the steps one by one copy
}

TEST(ViewChain, HeadMergeAndSizeOneDimensionsAgree) {
    const torch::Tensor heads = torch::randn({2, 4, 6, 3});  // [B, H, L, d]
    const std::vector<ViewStep> merge = {{Kind::reshape, {2, 4, 1, 6, 3}}, {Kind::permute, {3, 0, 2, 1, 4}}, {Kind::reshape, {12, 12}}};
    const auto y = apply_view_chain(heads, merge);
    ASSERT_TRUE(y.has_value());
    EXPECT_TRUE(torch::equal(*y, step_by_step(heads, merge)));
    const std::vector<ViewStep> unsqueeze = {{Kind::reshape, {1, 48, 1, 3}}, {Kind::permute, {2, 0, 3, 1}}, {Kind::reshape, {1, 1, 3, 48}}};
    EXPECT_TRUE(torch::equal(*apply_view_chain(heads, unsqueeze), step_by_step(heads, unsqueeze)));
}

TEST(ViewChain, RandomChainsAgreeWithTheStepsOneByOne) {
    std::mt19937 random(7);
    const Ints factors = {1, 2, 2, 3, 5};
    for (int trial = 0; trial < 400; ++trial) {
        // A random shape whose size is 60, as 2 to 4 dimensions.
        const auto random_shape = [&] {
            Ints shape(2 + random() % 3, 1);
            for (const std::int64_t f : factors) shape[random() % shape.size()] *= f;
            return shape;
        };
        const Ints start = random_shape();
        torch::Tensor x = torch::randn(start);
        if (trial % 2 == 1) {  // a permuted view
            Ints perm(start.size());
            std::iota(perm.begin(), perm.end(), 0);
            std::shuffle(perm.begin(), perm.end(), random);
            x = torch::randn(start).permute(perm);
        }
        std::vector<ViewStep> steps;
        Ints shape = random_shape();
        steps.push_back({Kind::reshape, shape});
        Ints perm(shape.size());
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), random);
        steps.push_back({Kind::permute, perm});
        steps.push_back({Kind::reshape, random_shape()});
        const auto y = apply_view_chain(x, steps);
        ASSERT_TRUE(y.has_value()) << "trial " << trial;
        EXPECT_TRUE(torch::equal(*y, step_by_step(x, steps))) << "trial " << trial;
    }
}

TEST(ViewChain, ShapesThatDoNotFitAreLeftToTheSteps) {
    const torch::Tensor x = torch::randn({2, 3});
    EXPECT_FALSE(apply_view_chain(x, std::vector<ViewStep>{{Kind::reshape, {4, 2}}}).has_value());
    EXPECT_FALSE(apply_view_chain(torch::zeros({0, 3}), std::vector<ViewStep>{{Kind::reshape, {3, 0}}}).has_value());
}

}  // namespace
}  // namespace inferbench::torch_onnx
