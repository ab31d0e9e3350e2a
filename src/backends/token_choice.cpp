#include "backends/token_choice.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace inferbench {

std::int32_t greedy_token(std::span<const float> logits) {
    // max_element keeps the first of equal values: the lowest id.
    return static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
}

std::int32_t TokenChooser::choose(std::span<const float> logits) {
    if (sampling_ == Sampling::greedy) return greedy_token(logits);
    const double u = static_cast<double>(draws_.next() >> 11U) * 0x1p-53;
    const double top = *std::max_element(logits.begin(), logits.end());
    double total = 0;
    for (const float l : logits) total += std::exp(static_cast<double>(l) - top);
    double cumulative = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) {
        cumulative += std::exp(static_cast<double>(logits[i]) - top) / total;
        if (cumulative > u) return static_cast<std::int32_t>(i);
    }
    return static_cast<std::int32_t>(logits.size() - 1);  // rounding left the sum just under u
}

}  // namespace inferbench
