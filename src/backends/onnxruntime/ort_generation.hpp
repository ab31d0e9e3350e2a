// Generation with an ONNX decoder (models/onnx_decoder's interface, Hugging Face optimum's: past_key_values.* in,
// present.* out) in an ONNX Runtime session: the prefill of every prompt from an empty cache, then one decode
// step per token, each step's present.* fed back as the next step's past_key_values.* as ONNX Runtime's own
// tensors. On a GPU those and the logits stay in device memory (IO binding to the provider's memory): only the
// last position's logits of each sequence come to the host, where the next tokens are chosen (greedy: the lowest id of the largest logit; seeded: drawn from the
// softmax with a splitmix64 stream of the request's seed).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/cuda_runtime.hpp"

namespace inferbench {

// The next token of each sequence from the last position's logits ([batch, vocab] rows of float32): greedy
// picks the largest (ties: the lowest id); seeded draws from softmax(logits) with `rng_state` (advanced).
std::vector<std::int32_t> choose_tokens(std::span<const float> last_logits, std::int64_t vocab, Sampling sampling,
                                        std::uint64_t& rng_state);

class OrtGeneration {
public:
    // `session` (kept by the caller, outliving this object) runs the decoder at `model_path`; on a GPU,
    // `device_memory` is where its provider keeps device tensors and `stream` the one it computes on (both
    // nullptr: the CPU). Throws UserError for a file that is not a decoder this can run.
    OrtGeneration(Ort::Session& session, const std::string& model_path, const OrtMemoryInfo* device_memory,
                  const cuda::StreamHandle* stream);

    const DecoderInfo& info() const { return info_; }
    // Checks the lengths against the model's context and keeps the prompts.
    void prepare(const GenerationRequest& request);
    void generate(TokenSink& sink);

private:
    struct StepInputs {
        std::vector<std::int64_t> ids, mask, positions;
        std::vector<std::int64_t> ids_shape, mask_shape;
    };
    // One forward pass over `step`'s tokens: the last position's logits as float32 [batch, vocab]; the
    // cache_ becomes the step's present.*.
    std::vector<float> run(StepInputs& step);
    std::vector<Ort::Value> empty_cache() const;

    Ort::Session& session_;
    std::string model_path_;
    const OrtMemoryInfo* device_memory_;
    const cuda::StreamHandle* stream_;
    DecoderInfo info_;
    ONNXTensorElementDataType kv_type_ = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
    std::vector<std::string> past_names_, present_names_;
    GenerationRequest request_;
    bool prepared_ = false;
    std::vector<Ort::Value> cache_;  // the last step's present.*, in past_names_' order
};

}  // namespace inferbench
