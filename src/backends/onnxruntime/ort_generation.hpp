// Generation with an ONNX decoder (models/onnx_decoder's interface, Hugging Face optimum's: past_key_values.* in,
// present.* out) in an ONNX Runtime session: the prefill of every prompt from an empty cache, then one decode
// step per token, each step's present.* fed back as the next step's past_key_values.* as ONNX Runtime's own
// tensors. On a GPU those and the logits stay in device memory (IO binding to the provider's memory): only the
// last position's logits of each sequence come to the host, where backends/token_choice chooses the next tokens
// (greedy, or seeded with a stream of the request's seed that starts afresh with every generation).
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/cuda_runtime.hpp"

namespace inferbench {

// Whether ONNX Runtime's error says an allocation failed (its arenas, the CUDA provider's cudaMalloc, the CPU's
// operator new): a generation whose cache and activations do not fit, which fails as "out of memory".
bool is_out_of_memory(std::string_view ort_message);

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
