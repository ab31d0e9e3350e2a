// How an in-process engine chooses each sequence's next token from its logits (Backend::generate): greedy, the
// most likely token (ties: the lowest id), or seeded, drawn from softmax(logits) with a splitmix64 stream. The
// draw is the same as the Python runners' (runners/runner_protocol.py, splitmix64_uniforms): each output's top 53
// bits scaled to [0, 1), one draw per sequence per step in batch order; the token is the first whose cumulative
// probability exceeds the draw.
#pragma once

#include <cstdint>
#include <span>

#include "core/generation.hpp"
#include "core/splitmix64.hpp"

namespace inferbench {

std::int32_t greedy_token(std::span<const float> logits);

class TokenChooser {
public:
    // The seeded stream starts afresh with every chooser: one per generation.
    TokenChooser(Sampling sampling, std::uint64_t seed) : sampling_(sampling), draws_(seed) {}
    std::int32_t choose(std::span<const float> logits);

private:
    Sampling sampling_;
    SplitMix64 draws_;
};

}  // namespace inferbench
