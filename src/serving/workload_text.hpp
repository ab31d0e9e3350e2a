// Text for serving workloads: seeded words from a fixed list of common English words (each one token in the
// common BPE and SentencePiece vocabularies, so a count of words is an estimate of tokens), and the token
// estimate of a user's own text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/splitmix64.hpp"

namespace inferbench::serving {

// `count` words drawn from the list, separated by single spaces.
std::string seeded_words(SplitMix64& random, std::int64_t count);

// Words separated by whitespace.
std::int64_t count_words(std::string_view text);

// A user's text's length in tokens, estimated: 1.3 tokens a word (English prose in Llama's and GPT's
// tokenizers), at least 1. A measured count comes from the server's usage, never from here.
std::int64_t estimated_tokens(std::string_view text);

}  // namespace inferbench::serving
