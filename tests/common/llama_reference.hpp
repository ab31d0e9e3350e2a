// A plain reference of a Llama-architecture decoder's greedy generation, in double precision, over the seeded
// weights of models/decoder_weights (Hugging Face's conventions: rotate_half rotary embeddings, grouped-query
// attention, SwiGLU, RMSNorm). Tests hold every engine's greedy tokens at fp32 against it. Slow and simple on
// purpose: one token at a time, nothing fused, nothing shared with the engines.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/generation.hpp"
#include "models/decoder_weights.hpp"

namespace inferbench::testing {

struct ReferenceGeneration {
    std::vector<std::int32_t> tokens;  // output_tokens of them, the prefill's first
    // The smallest gap between the best and the second-best logit over the steps: a test may ask it to be well
    // above an engine's float32 rounding, so that agreement is meaningful and not luck.
    double smallest_margin = 0;
};

class LlamaReference {
public:
    LlamaReference(const DecoderShape& shape, std::uint64_t seed) : s_(shape) {
        for (const models::DecoderTensor& t : models::decoder_tensors(shape)) {
            std::vector<float> values(static_cast<std::size_t>(t.element_count()));
            models::fill_decoder_tensor(t, seed, values);
            weights_.emplace(t.name, std::move(values));
        }
    }

    ReferenceGeneration greedy(std::span<const std::int32_t> prompt, std::int64_t output_tokens) const {
        Cache cache(static_cast<std::size_t>(s_.layers));
        std::vector<double> logits;
        for (std::size_t i = 0; i < prompt.size(); ++i) logits = forward(prompt[i], static_cast<std::int64_t>(i), cache);
        ReferenceGeneration out;
        out.smallest_margin = INFINITY;
        std::int64_t position = static_cast<std::int64_t>(prompt.size());
        for (std::int64_t step = 0; step < output_tokens; ++step) {
            const auto best = static_cast<std::int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
            double second = -INFINITY;
            for (std::size_t v = 0; v < logits.size(); ++v)
                if (static_cast<std::int32_t>(v) != best) second = std::max(second, logits[v]);
            out.smallest_margin = std::min(out.smallest_margin, logits[static_cast<std::size_t>(best)] - second);
            out.tokens.push_back(best);
            if (step + 1 < output_tokens) logits = forward(best, position++, cache);
        }
        return out;
    }

private:
    struct LayerCache {
        std::vector<std::vector<double>> keys, values;  // per position: kv_heads x head_dim
    };
    using Cache = std::vector<LayerCache>;

    const std::vector<float>& w(const std::string& name) const { return weights_.at(name); }

    // y = W x for W [rows, cols] in PyTorch's layout.
    static std::vector<double> linear(const std::vector<float>& weight, const std::vector<double>& x, std::int64_t rows) {
        const std::size_t cols = x.size();
        std::vector<double> y(static_cast<std::size_t>(rows), 0.0);
        for (std::size_t r = 0; r < y.size(); ++r) {
            double sum = 0;
            for (std::size_t c = 0; c < cols; ++c) sum += static_cast<double>(weight[r * cols + c]) * x[c];
            y[r] = sum;
        }
        return y;
    }

    std::vector<double> rms_norm(const std::vector<double>& x, const std::vector<float>& weight) const {
        double mean_square = 0;
        for (const double v : x) mean_square += v * v;
        mean_square /= static_cast<double>(x.size());
        const double scale = 1.0 / std::sqrt(mean_square + s_.rms_eps);
        std::vector<double> y(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * static_cast<double>(weight[i]);
        return y;
    }

    // Hugging Face's rotate_half: dimension i pairs with i + head_dim / 2.
    void rotate(std::vector<double>& v, std::int64_t heads, std::int64_t position) const {
        const std::int64_t half = s_.head_dim / 2;
        for (std::int64_t h = 0; h < heads; ++h) {
            double* head = v.data() + h * s_.head_dim;
            for (std::int64_t i = 0; i < half; ++i) {
                const double inv_freq = std::pow(s_.rope_theta, -2.0 * static_cast<double>(i) / static_cast<double>(s_.head_dim));
                const double angle = static_cast<double>(position) * inv_freq;
                const double a = head[i], b = head[i + half];
                head[i] = a * std::cos(angle) - b * std::sin(angle);
                head[i + half] = b * std::cos(angle) + a * std::sin(angle);
            }
        }
    }

    std::vector<double> attention(const std::vector<double>& q, const LayerCache& cache) const {
        const std::int64_t group = s_.heads / s_.kv_heads;
        const double scale = 1.0 / std::sqrt(static_cast<double>(s_.head_dim));
        std::vector<double> out(static_cast<std::size_t>(s_.heads * s_.head_dim), 0.0);
        for (std::int64_t h = 0; h < s_.heads; ++h) {
            const std::int64_t kv = h / group;
            std::vector<double> scores;
            for (const auto& key : cache.keys) {
                double dot = 0;
                for (std::int64_t d = 0; d < s_.head_dim; ++d)
                    dot += q[static_cast<std::size_t>(h * s_.head_dim + d)] * key[static_cast<std::size_t>(kv * s_.head_dim + d)];
                scores.push_back(dot * scale);
            }
            const double top = *std::max_element(scores.begin(), scores.end());
            double total = 0;
            for (double& score : scores) total += (score = std::exp(score - top));
            for (std::size_t j = 0; j < scores.size(); ++j)
                for (std::int64_t d = 0; d < s_.head_dim; ++d)
                    out[static_cast<std::size_t>(h * s_.head_dim + d)] +=
                        scores[j] / total * cache.values[j][static_cast<std::size_t>(kv * s_.head_dim + d)];
        }
        return out;
    }

    std::vector<double> forward(std::int32_t token, std::int64_t position, Cache& cache) const {
        const auto hidden = static_cast<std::size_t>(s_.hidden);
        const std::vector<float>& embedding = w("model.embed_tokens.weight");
        std::vector<double> x(hidden);
        for (std::size_t i = 0; i < hidden; ++i) x[i] = embedding[static_cast<std::size_t>(token) * hidden + i];
        for (std::int64_t layer = 0; layer < s_.layers; ++layer) {
            const std::string p = fmt::format("model.layers.{}.", layer);
            const std::vector<double> h = rms_norm(x, w(p + "input_layernorm.weight"));
            std::vector<double> q = linear(w(p + "self_attn.q_proj.weight"), h, s_.heads * s_.head_dim);
            std::vector<double> k = linear(w(p + "self_attn.k_proj.weight"), h, s_.kv_heads * s_.head_dim);
            std::vector<double> v = linear(w(p + "self_attn.v_proj.weight"), h, s_.kv_heads * s_.head_dim);
            rotate(q, s_.heads, position);
            rotate(k, s_.kv_heads, position);
            LayerCache& layer_cache = cache[static_cast<std::size_t>(layer)];
            layer_cache.keys.push_back(std::move(k));
            layer_cache.values.push_back(std::move(v));
            const std::vector<double> o = linear(w(p + "self_attn.o_proj.weight"), attention(q, layer_cache), s_.hidden);
            for (std::size_t i = 0; i < hidden; ++i) x[i] += o[i];
            const std::vector<double> h2 = rms_norm(x, w(p + "post_attention_layernorm.weight"));
            const std::vector<double> gate = linear(w(p + "mlp.gate_proj.weight"), h2, s_.intermediate);
            std::vector<double> up = linear(w(p + "mlp.up_proj.weight"), h2, s_.intermediate);
            for (std::size_t i = 0; i < up.size(); ++i) up[i] *= gate[i] / (1.0 + std::exp(-gate[i]));
            const std::vector<double> down = linear(w(p + "mlp.down_proj.weight"), up, s_.hidden);
            for (std::size_t i = 0; i < hidden; ++i) x[i] += down[i];
        }
        const std::vector<double> final_hidden = rms_norm(x, w("model.norm.weight"));
        return linear(s_.tied_embeddings ? embedding : w("lm_head.weight"), final_hidden, s_.vocab);
    }

    DecoderShape s_;
    std::map<std::string, std::vector<float>> weights_;
};

}  // namespace inferbench::testing
