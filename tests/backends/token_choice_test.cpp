#include "backends/token_choice.hpp"

#include <array>
#include <cmath>

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(TokenChoice, GreedyTakesTheLowestIdOfTheLargestLogits) {
    const std::array<float, 5> logits = {0.5F, 2.0F, -1.0F, 2.0F, 1.0F};
    EXPECT_EQ(greedy_token(logits), 1);
    TokenChooser greedy(Sampling::greedy, 9);
    EXPECT_EQ(greedy.choose(logits), 1);
}

// Four equal logits: the token is floor(4 u), u the stream's draws. For seed 7 the Python runners' draws
// (runner_protocol.splitmix64_uniforms(7)) are 0.3898297483912715 and 0.01678829452815611: tokens 1 and 0.
TEST(TokenChoice, SeededDrawsFollowTheRunnersStream) {
    const std::array<float, 4> flat = {0.0F, 0.0F, 0.0F, 0.0F};
    TokenChooser seeded(Sampling::seeded, 7);
    EXPECT_EQ(seeded.choose(flat), 1);
    EXPECT_EQ(seeded.choose(flat), 0);
    SplitMix64 stream(7);
    EXPECT_DOUBLE_EQ(static_cast<double>(stream.next() >> 11U) * 0x1p-53, 0.3898297483912715);
}

TEST(TokenChoice, SeededDrawsFollowTheSoftmax) {
    // Token 2 holds e^4 / (2 + e^4) = 96.5 % of the probability: about that share of 4000 draws.
    const std::array<float, 3> logits = {0.0F, 0.0F, 4.0F};
    TokenChooser seeded(Sampling::seeded, 123);
    int twos = 0;
    for (int i = 0; i < 4000; ++i) twos += seeded.choose(logits) == 2 ? 1 : 0;
    const double expected = std::exp(4.0) / (2 + std::exp(4.0));
    EXPECT_NEAR(twos / 4000.0, expected, 0.01);
}

}  // namespace
}  // namespace inferbench
