#include "backends/token_choice.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace inferbench {
namespace {

TEST(TokenChoice, GreedyTakesTheLargestLogitAndTheLowestIdOfATie) {
    TokenChoice greedy(Sampling::greedy, 1);
    const std::vector<float> logits = {0.5F, 2.0F, -1.0F, 2.0F};
    EXPECT_EQ(greedy.choose(logits), 1);
    EXPECT_EQ(greedy_token(logits), 1);
    EXPECT_THROW(greedy_token({}), std::invalid_argument);
}

TEST(TokenChoice, SeededDrawsFollowTheSoftmaxAndRepeatFromTheStart) {
    TokenChoice seeded(Sampling::seeded, 123);
    const std::vector<float> logits = {0.0F, static_cast<float>(std::log(3.0)), -100.0F};  // 1/4, 3/4, ~0
    std::vector<std::int32_t> first;
    int ones = 0;
    for (int i = 0; i < 4000; ++i) {
        first.push_back(seeded.choose(logits));
        ones += first.back() == 1 ? 1 : 0;
        EXPECT_NE(first.back(), 2);
    }
    EXPECT_NEAR(ones / 4000.0, 0.75, 0.03);  // about 4.4 standard deviations
    seeded.restart();
    for (int i = 0; i < 100; ++i) EXPECT_EQ(seeded.choose(logits), first[static_cast<std::size_t>(i)]) << i;
    TokenChoice other(Sampling::seeded, 124);
    std::vector<std::int32_t> second;
    for (int i = 0; i < 100; ++i) second.push_back(other.choose(logits));
    EXPECT_NE(std::vector<std::int32_t>(first.begin(), first.begin() + 100), second);
}

}  // namespace
}  // namespace inferbench
