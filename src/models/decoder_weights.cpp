#include "models/decoder_weights.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "models/weight_generator.hpp"

namespace inferbench::models {

std::int64_t DecoderTensor::element_count() const {
    std::int64_t count = 1;
    for (const std::int64_t d : shape) count *= d;
    return count;
}

std::vector<DecoderTensor> decoder_tensors(const DecoderShape& s) {
    using Kind = DecoderTensor::Kind;
    const std::int64_t q = s.heads * s.head_dim;
    const std::int64_t kv = s.kv_heads * s.head_dim;
    std::vector<DecoderTensor> tensors;
    tensors.push_back({"model.embed_tokens.weight", {s.vocab, s.hidden}, Kind::embedding, -1});
    for (std::int64_t i = 0; i < s.layers; ++i) {
        const std::string p = fmt::format("model.layers.{}.", i);
        tensors.push_back({p + "input_layernorm.weight", {s.hidden}, Kind::norm, i});
        tensors.push_back({p + "self_attn.q_proj.weight", {q, s.hidden}, Kind::linear, i});
        tensors.push_back({p + "self_attn.k_proj.weight", {kv, s.hidden}, Kind::linear, i});
        tensors.push_back({p + "self_attn.v_proj.weight", {kv, s.hidden}, Kind::linear, i});
        tensors.push_back({p + "self_attn.o_proj.weight", {s.hidden, q}, Kind::linear, i});
        tensors.push_back({p + "post_attention_layernorm.weight", {s.hidden}, Kind::norm, i});
        tensors.push_back({p + "mlp.gate_proj.weight", {s.intermediate, s.hidden}, Kind::linear, i});
        tensors.push_back({p + "mlp.up_proj.weight", {s.intermediate, s.hidden}, Kind::linear, i});
        tensors.push_back({p + "mlp.down_proj.weight", {s.hidden, s.intermediate}, Kind::linear, i});
    }
    tensors.push_back({"model.norm.weight", {s.hidden}, Kind::norm, -1});
    if (!s.tied_embeddings) tensors.push_back({"lm_head.weight", {s.vocab, s.hidden}, Kind::linear, -1});
    return tensors;
}

void fill_decoder_tensor(const DecoderTensor& tensor, std::uint64_t model_seed, std::span<float> out) {
    if (static_cast<std::int64_t>(out.size()) != tensor.element_count())
        throw std::invalid_argument(fmt::format("{}: {} values asked for a tensor of {}", tensor.name, out.size(),
                                                tensor.element_count()));
    WeightGenerator gen(tensor_seed(model_seed, tensor.name));
    switch (tensor.kind) {
        case DecoderTensor::Kind::embedding: gen.fill_symmetric(out, 1.0F); return;
        case DecoderTensor::Kind::norm: gen.fill_uniform(out, 0.75F, 1.25F); return;
        case DecoderTensor::Kind::linear: {
            const auto fan_in = static_cast<double>(tensor.shape.back());
            gen.fill_symmetric(out, static_cast<float>(std::sqrt(3.0 / fan_in)));
            return;
        }
    }
}

}  // namespace inferbench::models
