// The seeded random weights of a Llama-architecture decoder, tensor by tensor, under Hugging Face's names and
// in PyTorch's layout (a Linear's weight is [out, in]). Every form inferbench writes (GGUF, ONNX, a Hugging
// Face folder) takes its values from here, so the same seed gives the same model on every engine; a tensor's
// values depend on the model seed and its name only, so a writer may make them one at a time (8 B
// parameters never need to be in memory at once).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/generation.hpp"

namespace inferbench::models {

struct DecoderTensor {
    enum class Kind { embedding, linear, norm };
    std::string name;                  // "model.layers.0.self_attn.q_proj.weight"
    std::vector<std::int64_t> shape;   // [out, in] for a linear; [vocab, hidden] for the embedding
    Kind kind = Kind::linear;
    std::int64_t layer = -1;           // -1: not in a layer (embedding, final norm, lm_head)

    std::int64_t element_count() const;
};

// In Hugging Face's order: model.embed_tokens.weight, then per layer input_layernorm, q_proj, k_proj, v_proj,
// o_proj, post_attention_layernorm, gate_proj, up_proj, down_proj, then model.norm.weight and lm_head.weight
// (absent where the embeddings are tied).
std::vector<DecoderTensor> decoder_tensors(const DecoderShape& shape);

// The tensor's values (out.size() == tensor.element_count()): a linear's uniform in +-sqrt(3 / fan_in) (unit
// variance out of unit variance in), the embedding's in +-1, a norm's in [0.75, 1.25].
void fill_decoder_tensor(const DecoderTensor& tensor, std::uint64_t model_seed, std::span<float> out);

}  // namespace inferbench::models
