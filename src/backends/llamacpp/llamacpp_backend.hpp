// The llamacpp backend: decoder language models in GGUF files (models/gguf_writer writes the zoo's) run by
// llama.cpp's C API, on the CPU (its backend module for this CPU) or a CUDA GPU (its CUDA module, where its
// libraries are). Only generative cells: one generation is one llama_decode of every prompt (each sequence its
// own sequence id, logits at each last position), then one llama_decode per step of one token per sequence.
// The KV cache is float32 at fp32 (the tokens of the reference, exactly) and float16 otherwise.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "backends/backend.hpp"

namespace inferbench {

std::unique_ptr<Backend> make_llamacpp_backend();

namespace llamacpp {

// What one context holds for a cell: n_ctx over all sequences, one sequence per prompt, a logical batch that
// takes the whole prefill in one llama_decode.
struct ContextPlan {
    std::int64_t n_ctx = 0;
    std::int64_t n_seq_max = 1;
    std::int64_t n_batch = 1;
    std::int64_t tokens_per_sequence = 0;
};
ContextPlan plan_context(std::int64_t batch, const GenerationSettings& generation);
// Why `plan` does not fit a model of `max_context` positions, or nothing.
std::optional<std::string> context_problem(const ContextPlan& plan, std::int64_t max_context);
// KV cache bytes of `plan` for a model with `kv_elements_per_token` (core/generation) of `element_bytes`.
std::int64_t kv_cache_bytes(const ContextPlan& plan, std::int64_t kv_elements_per_token, std::int64_t element_bytes);

}  // namespace llamacpp
}  // namespace inferbench
