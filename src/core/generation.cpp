#include "core/generation.hpp"

#include <algorithm>

#include "core/splitmix64.hpp"

namespace inferbench {

std::string_view to_string(Sampling sampling) {
    switch (sampling) {
        case Sampling::greedy: return "greedy";
        case Sampling::seeded: return "seeded";
    }
    return "?";
}

std::optional<Sampling> parse_sampling(std::string_view text) {
    for (Sampling s : {Sampling::greedy, Sampling::seeded})
        if (to_string(s) == text) return s;
    return std::nullopt;
}

namespace {

std::int64_t layer_parameters(const DecoderShape& s) {
    const std::int64_t q_and_o = 2 * s.hidden * s.heads * s.head_dim;
    const std::int64_t k_and_v = 2 * s.hidden * s.kv_heads * s.head_dim;
    const std::int64_t mlp = 3 * s.hidden * s.intermediate;
    const std::int64_t norms = 2 * s.hidden;
    return q_and_o + k_and_v + mlp + norms;
}

std::int64_t embedding_parameters(const DecoderShape& s) { return s.vocab * s.hidden; }

}  // namespace

std::int64_t parameter_count(const DecoderShape& s) {
    const std::int64_t heads = s.tied_embeddings ? 0 : embedding_parameters(s);
    return embedding_parameters(s) + s.layers * layer_parameters(s) + s.hidden + heads;
}

std::int64_t parameters_read_per_step(const DecoderShape& s) {
    return s.tied_embeddings ? parameter_count(s) : parameter_count(s) - embedding_parameters(s);
}

std::int64_t kv_elements_per_token(const DecoderShape& s) { return 2 * s.layers * s.kv_heads * s.head_dim; }

double forward_flops(const DecoderShape& s, std::int64_t tokens, std::int64_t past) {
    const double t = static_cast<double>(tokens);
    const double p = static_cast<double>(past);
    // Every weight but the embedding lookup's is one multiply-add per token (norm weights are a multiply:
    // counted alike, a rounding error at these sizes).
    const double matmul = 2.0 * t * static_cast<double>(parameters_read_per_step(s));
    // Causal attention: token i of the new ones attends to past + i positions, QK^T and PV each a
    // multiply-add per head dimension.
    const double attended = t * p + t * (t + 1.0) / 2.0;
    const double attention = 4.0 * static_cast<double>(s.layers * s.heads * s.head_dim) * attended;
    return matmul + attention;
}

std::optional<std::string_view> shape_problem(const DecoderShape& s) {
    if (s.layers <= 0 || s.hidden <= 0 || s.heads <= 0 || s.kv_heads <= 0 || s.head_dim <= 0 || s.intermediate <= 0 ||
        s.vocab <= 0 || s.max_context <= 0)
        return "a layer count, width, head count, vocabulary or context that is not positive";
    if (s.layers > kMaxDecoderLayers || s.hidden > kMaxDecoderDimension || s.heads > kMaxDecoderDimension ||
        s.kv_heads > kMaxDecoderDimension || s.head_dim > kMaxDecoderDimension ||
        s.intermediate > kMaxDecoderDimension || s.vocab > kMaxDecoderDimension ||
        s.heads * s.head_dim > kMaxDecoderDimension)
        return "a dimension beyond any decoder's (more than 4096 layers, or a width, head count, head width or "
               "vocabulary above 4 M)";
    if (s.heads % s.kv_heads != 0) return "query heads that are not a multiple of the key/value heads";
    if (s.head_dim % 2 != 0) return "an odd head dimension, which rotary embeddings cannot rotate in pairs";
    return std::nullopt;
}

std::vector<std::int32_t> generation_prompts(std::int64_t batch, std::int64_t input_tokens, std::int64_t vocab,
                                             std::uint64_t seed) {
    const std::int64_t reserved = kFirstPromptToken + kReservedTopTokens;
    const std::int64_t low = vocab > 2 * reserved ? kFirstPromptToken : 0;
    const std::int64_t high = vocab > 2 * reserved ? vocab - kReservedTopTokens : vocab;
    const auto span = static_cast<std::uint64_t>(std::max<std::int64_t>(high - low, 1));
    std::uint64_t state = seed ^ 0x70726f6d70747321ull;  // "prompts!"
    std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * input_tokens));
    for (auto& id : ids) id = static_cast<std::int32_t>(low + static_cast<std::int64_t>(splitmix64(state) % span));
    return ids;
}

}  // namespace inferbench
