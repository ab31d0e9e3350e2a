#include "serving/workload_text.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace inferbench::serving {
namespace {

// Short, common words: a single token each, with its leading space, in the tokenizers of Llama 2 and 3,
// GPT-2/4 and Qwen.
constexpr std::array<std::string_view, 64> kWords = {
    "the",   "of",    "and",   "to",   "in",   "is",    "that", "for",  "it",   "as",    "was",    "with", "be",
    "by",    "on",    "not",   "he",   "this", "are",   "or",   "his",  "from", "at",    "which",  "but",  "have",
    "an",    "had",   "they",  "you",  "were", "their", "one",  "all",  "we",   "can",   "her",    "has",  "there",
    "been",  "if",    "more",  "when", "will", "would", "who",  "so",   "no",   "time",  "people", "year", "water",
    "world", "house", "light", "day",  "man",  "work",  "life", "hand", "part", "place", "case",   "week"};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

}  // namespace

std::string seeded_words(SplitMix64& random, std::int64_t count) {
    std::string text;
    for (std::int64_t i = 0; i < count; ++i) {
        if (i > 0) text += ' ';
        text += kWords[random.next() % kWords.size()];
    }
    return text;
}

std::int64_t count_words(std::string_view text) {
    std::int64_t words = 0;
    bool in_word = false;
    for (const char c : text) {
        if (!is_space(c) && !in_word) ++words;
        in_word = !is_space(c);
    }
    return words;
}

std::int64_t estimated_tokens(std::string_view text) {
    return std::max<std::int64_t>(1,
                                  static_cast<std::int64_t>(std::ceil(1.3 * static_cast<double>(count_words(text)))));
}

}  // namespace inferbench::serving
