#include "core/plan/stop_criterion.hpp"

#include <span>

namespace inferbench {
namespace {

template <typename Word>
std::optional<Word> parse_word(std::span<const Word> all, std::string_view text) {
    for (const Word word : all)
        if (to_string(word) == text) return word;
    return std::nullopt;
}

template <typename Word>
std::string join_words(std::span<const Word> all) {
    std::string text;
    for (const Word word : all) {
        if (!text.empty()) text += ", ";
        text += to_string(word);
    }
    return text;
}

}  // namespace

std::string_view to_string(StopCriterion criterion) {
    switch (criterion) {
        case StopCriterion::fixed: return "fixed";
        case StopCriterion::stdrel: return "stdrel";
        case StopCriterion::entropy: return "entropy";
    }
    return "?";
}

std::optional<StopCriterion> parse_stop_criterion(std::string_view text) {
    return parse_word<StopCriterion>(kAllStopCriteria, text);
}

std::string known_stop_criteria() { return join_words<StopCriterion>(kAllStopCriteria); }

std::string_view to_string(Convergence convergence) {
    switch (convergence) {
        case Convergence::fixed: return "fixed";
        case Convergence::converged: return "converged";
        case Convergence::not_converged: return "not_converged";
    }
    return "?";
}

std::optional<Convergence> parse_convergence(std::string_view text) {
    return parse_word<Convergence>(kAllConvergences, text);
}

std::string known_convergences() { return join_words<Convergence>(kAllConvergences); }

std::string_view convergence_label(Convergence convergence) {
    return convergence == Convergence::not_converged ? "not converged" : to_string(convergence);
}

}  // namespace inferbench
