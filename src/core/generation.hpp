// Generative cells: a decoder language model asked to continue a batch of prompts. A cell with
// input_tokens > 0 is generative: one iteration is one generation (prefill of every prompt, then decode
// steps until every sequence has output_tokens; end-of-sequence ignored, as MLPerf and optimum-benchmark
// do), and every step's time is kept besides the iteration's.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace inferbench {

// How each next token is chosen: the most likely one (greedy: the same tokens on every engine at fp32),
// or drawn from the softmax of the logits with the cell's seed (seeded).
enum class Sampling { greedy, seeded };
std::string_view to_string(Sampling sampling);
std::optional<Sampling> parse_sampling(std::string_view text);

// A generative cell's lengths; input_tokens == 0: the cell is not generative.
struct GenerationSettings {
    std::int64_t input_tokens = 0;   // prompt tokens per sequence
    std::int64_t output_tokens = 0;  // tokens generated per sequence, the first (prefill's) included
    Sampling sampling = Sampling::greedy;

    bool active() const { return input_tokens > 0; }
    friend bool operator==(const GenerationSettings&, const GenerationSettings&) = default;
};

// Plans refuse longer prompts or outputs; a model's own context limit is checked where it is known.
inline constexpr std::int64_t kMaxGenerationTokens = 1 << 20;

// The shape of a Llama-architecture decoder (RMSNorm, rotary embeddings, grouped-query attention,
// SwiGLU): enough to count its parameters, its weight bytes and its KV cache.
struct DecoderShape {
    std::int64_t layers = 0;
    std::int64_t hidden = 0;        // d_model
    std::int64_t heads = 0;         // query heads
    std::int64_t kv_heads = 0;      // key/value heads (grouped-query attention: heads % kv_heads == 0)
    std::int64_t head_dim = 0;
    std::int64_t intermediate = 0;  // SwiGLU's inner width
    std::int64_t vocab = 0;
    std::int64_t max_context = 0;   // positions the model was made for
    bool tied_embeddings = false;   // lm_head shares the token embedding
    double rope_theta = 500000.0;
    double rms_eps = 1e-5;

    friend bool operator==(const DecoderShape&, const DecoderShape&) = default;
};

// Every weight, the embedding counted once where tied (the figure model cards publish).
std::int64_t parameter_count(const DecoderShape& shape);
// The weights a decode step reads: every parameter but the embedding table, of which a step reads only its
// tokens' rows (the lm_head is read whole, tied or not).
std::int64_t parameters_read_per_step(const DecoderShape& shape);
// Keys and values of one token over all layers, in elements (x the KV cache's element size for bytes).
std::int64_t kv_elements_per_token(const DecoderShape& shape);
// Floating-point operations of a forward pass over `tokens` new tokens of one sequence whose cache already
// holds `past` tokens: 2 per multiply-add of every matrix product, attention's QK^T and PV included.
double forward_flops(const DecoderShape& shape, std::int64_t tokens, std::int64_t past);
// Nothing where the shape is whole; else what is wrong with it, for an error line. Every width (and heads x
// head_dim) is also held within kMaxDecoderDimension, layers within kMaxDecoderLayers, so that the counts above,
// computed from a file's figures, cannot overflow (the largest published decoders are far inside: 126 layers, width 16,384, a vocabulary
// of 256 k).
inline constexpr std::int64_t kMaxDecoderDimension = std::int64_t{1} << 22;
inline constexpr std::int64_t kMaxDecoderLayers = 4096;
std::optional<std::string_view> shape_problem(const DecoderShape& shape);

// The prompts of a generative cell: batch x input_tokens token ids, row-major, seeded, drawn from
// [kFirstPromptToken, vocab - kReservedTopTokens) (where the vocabulary is large enough) so that no
// prompt holds a model's control tokens (Llama 3 keeps 256 at the top, SentencePiece models a few at the
// bottom).
inline constexpr std::int32_t kFirstPromptToken = 16;
inline constexpr std::int32_t kReservedTopTokens = 256;
std::vector<std::int32_t> generation_prompts(std::int64_t batch, std::int64_t input_tokens, std::int64_t vocab,
                                             std::uint64_t seed);

// One step of a generation: step 0 is the prefill (every sequence's first token), then one decode step each
// (one more token of every sequence).
struct GenerationStep {
    std::int64_t end_ns = 0;          // CLOCK_MONOTONIC: when the step's tokens were in host memory
    std::int64_t kv_cache_bytes = 0;  // the KV cache the step read and wrote: batch x (input + step) tokens
    friend bool operator==(const GenerationStep&, const GenerationStep&) = default;
};

// One measured generation as the harness timed it (iteration `iteration` of its benchmark, whose start_ns is
// when generate() was called and whose e2e_ns ends with the last step): output_tokens steps when whole,
// fewer where it was stopped.
struct GenerationRecord {
    std::int64_t iteration = 0;
    std::vector<GenerationStep> steps;
    friend bool operator==(const GenerationRecord&, const GenerationRecord&) = default;
};

// The KV cache after `step` of a generation (core/generation's step numbering).
inline std::int64_t kv_cache_bytes(std::int64_t batch, std::int64_t input_tokens, std::int64_t step,
                                   std::int64_t kv_bytes_per_token) {
    return batch * (input_tokens + step) * kv_bytes_per_token;
}

}  // namespace inferbench
