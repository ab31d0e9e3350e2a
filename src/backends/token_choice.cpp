#include "backends/token_choice.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace inferbench {

std::int32_t greedy_token(std::span<const float> logits) {
    if (logits.empty()) throw std::invalid_argument("no logits to choose a token from");
    std::size_t best = 0;
    for (std::size_t i = 1; i < logits.size(); ++i)
        if (logits[i] > logits[best]) best = i;
    return static_cast<std::int32_t>(best);
}

std::int32_t TokenChoice::choose(std::span<const float> logits) {
    const std::int32_t best = greedy_token(logits);
    if (sampling_ == Sampling::greedy) return best;
    // softmax in double, shifted by the largest logit; the draw u in [0, 1) from the top 53 bits.
    const double top = logits[static_cast<std::size_t>(best)];
    std::vector<double> weights(logits.size());
    double total = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) total += weights[i] = std::exp(static_cast<double>(logits[i]) - top);
    const double u = static_cast<double>(stream_.next() >> 11U) * 0x1p-53;
    double cumulative = 0;
    std::size_t last = 0;  // the last token of nonzero weight: where rounding leaves u * total at the top
    for (std::size_t i = 0; i < weights.size(); ++i) {
        cumulative += weights[i];
        if (weights[i] > 0) last = i;
        if (u * total < cumulative) return static_cast<std::int32_t>(i);
    }
    return static_cast<std::int32_t>(last);
}

}  // namespace inferbench
