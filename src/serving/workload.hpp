// What a serving cell sends: its requests planned before the first one goes out, so that two runs with the
// same settings (or a stored workload replayed) send exactly the same bytes. Synthetic workloads draw their
// lengths and contents from the seed (core/splitmix64 through serving/random_draws, never a std::
// distribution): the same seed gives the same workload on every machine. A user's JSONL file (serving/
// workload_file) or a stored workload (serving/workload_json) can be the source instead.
//
// Prompt forms: completions with token ids (`prompt` as a list of ids) have an exact prompt length whatever
// the server's tokenizer; text prompts (completions with text, and every chat request) are seeded words from a
// fixed list of common English words that tokenizers keep whole, so input_tokens is then an estimate (about
// one token a word; a chat template adds its own tokens around the messages).
//
// Multi-turn sessions: turn k's prompt is the whole conversation so far, each earlier prompt followed by a
// planned filler of that turn's answer length in place of the server's answer (so a replay sends the same
// bytes whatever the server said), then the new user part. Shared prefixes: the sessions (or single requests)
// of prefix group g all begin with the same prefix_tokens tokens, which a server's prefix cache can reuse.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/serving.hpp"

namespace inferbench::serving {

// How request lengths spread around their means: fixed (every request the mean), uniform over
// mean x [1 - spread, 1 + spread], normal with deviation spread x mean. Lengths are clamped to [1, max].
enum class LengthDistribution { fixed, uniform, normal };
std::string_view to_string(LengthDistribution distribution);
std::optional<LengthDistribution> parse_length_distribution(std::string_view text);

enum class PromptForm { token_ids, text };
std::string_view to_string(PromptForm form);
std::optional<PromptForm> parse_prompt_form(std::string_view text);

inline constexpr std::string_view kSyntheticSource = "synthetic";
inline constexpr std::int64_t kMaxWorkloadRequests = 1'000'000;
inline constexpr std::int64_t kMaxTurns = 64;
inline constexpr std::int64_t kMaxPrefixGroups = 1'000'000;
// The longest prompt (a whole multi-turn conversation included) or output a workload plans, in tokens.
inline constexpr std::int64_t kMaxRequestTokens = std::int64_t{1} << 20;
// The default first token id of token-id prompts: above every control token of the common vocabularies'
// low range (Llama 2 keeps 3, GPT-2's BPE none, Qwen and Llama 3 keep theirs at the top).
inline constexpr std::int64_t kDefaultFirstTokenId = 100;

struct WorkloadSettings {
    std::string source{kSyntheticSource};  // "synthetic", or the path of a JSONL file or a stored workload
    ServingApi api = ServingApi::completions;
    PromptForm prompt_form = PromptForm::token_ids;  // completions only: chat requests are always text
    std::int64_t input_tokens = 128;   // mean length of a request's new user part (a single request: its prompt)
    std::int64_t output_tokens = 128;  // mean max_tokens; a file's request without its own takes this
    bool output_from_source = true;    // a file's own output lengths; false: output_tokens for every request
    LengthDistribution distribution = LengthDistribution::fixed;
    double spread = 0.0;                                 // relative: uniform's half-width, normal's deviation
    std::int64_t max_input_tokens = 32768;               // a drawn user part's length is clamped to this
    std::int64_t max_output_tokens = 32768;              // a drawn or estimated output length is clamped to this
    std::int64_t prefix_groups = 0;                      // 0: no shared prefix
    std::int64_t prefix_tokens = 0;                      // the shared prefix's length (part of the first prompt)
    std::int64_t turns = 1;                              // turns per session; 1: single requests
    std::int64_t first_token_id = kDefaultFirstTokenId;  // token ids are drawn from [first_token_id, vocab)
    std::int64_t vocab = 0;                              // the model's vocabulary size (token_ids: required)
    std::int64_t requests = 100;                         // the requests planned (a file: 0 takes every record)
    std::uint64_t seed = 0;
};

// Nothing when the settings make sense together; else one line saying which setting and how to fix it.
std::optional<std::string> workload_problem(const WorkloadSettings& settings);

// The planned requests, indices 0.. in order; sessions' turns one after another (session 0's turns, then
// session 1's ...). Throws UserError for settings workload_problem() refuses or a source file that cannot be
// read (naming the file and line).
std::vector<PlannedRequest> make_workload(const WorkloadSettings& settings);

// The lengths a workload draws, one per request: the mean spread by the distribution, clamped to [1, max].
std::vector<std::int64_t> draw_lengths(std::int64_t mean, LengthDistribution distribution, double spread,
                                       std::int64_t max, std::int64_t count, std::uint64_t seed, const char* purpose);

}  // namespace inferbench::serving
