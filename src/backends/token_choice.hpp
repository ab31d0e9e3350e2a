// How a generation picks each next token from a position's logits, for every engine alike: greedy takes the
// largest logit (the lowest id among equal ones); seeded draws from softmax(logits) with one splitmix64 stream
// per generation, seeded from GenerationRequest::seed, one draw per sequence and step in sequence order.
#pragma once

#include <cstdint>
#include <span>

#include "core/generation.hpp"
#include "core/splitmix64.hpp"

namespace inferbench {

class TokenChoice {
public:
    TokenChoice(Sampling sampling, std::uint64_t seed) : sampling_(sampling), seed_(seed), stream_(seed) {}
    // Back to the stream's start: each generation draws the same tokens.
    void restart() { stream_ = SplitMix64(seed_); }
    std::int32_t choose(std::span<const float> logits);

private:
    Sampling sampling_;
    std::uint64_t seed_;
    SplitMix64 stream_;
};

// The index of the largest value, the lowest among equal ones.
std::int32_t greedy_token(std::span<const float> logits);

}  // namespace inferbench
