// Generation on the LibTorch backend: an ONNX decoder with the KV cache as inputs and outputs (models/onnx_decoder's
// interface, optimum's) run by the ONNX interpreter, step by step. The prefill runs the prompts with an empty past;
// each decode step feeds the previous step's present.* back as past_key_values.*. Everything stays on the device
// between steps as LibTorch tensors; only the tokens (greedy: the argmax, on the device) or the last position's
// logits (seeded: drawn on the host) come back.
//
// The interpreter is not specialised to input shapes here (OnnxProgram::specialize): every step's sequence lengths
// differ, and a specialised program takes only the shapes it was specialised for. The program computes its
// shape arithmetic at every step instead.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "backends/backend.hpp"
#include "backends/token_choice.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"

namespace inferbench {

class TorchDecoder {
public:
    // Throws UserError naming the file for an ONNX file that is not a decoder of that interface.
    TorchDecoder(const std::string& path, torch::Device device, torch::ScalarType float_type);

    DecoderInfo info() const { return info_; }
    // Untimed: the prompts, attention mask and positions of every step, on the device.
    void prepare(const GenerationRequest& request);
    // One generation from an empty cache: output_tokens steps, each step's tokens handed to `sink` once on the host.
    void generate(TokenSink& sink);

private:
    // Where each of the program's inputs comes from.
    struct PastInput {
        std::size_t input = 0;    // past_key_values.{i}.{key,value}
        std::size_t present = 0;  // the output present.{i}.{key,value}
    };
    std::vector<torch::Tensor> prefill_inputs() const;
    // The tokens of `logits` ([batch, vocab]) as a device tensor [batch, 1] and on the host.
    std::pair<torch::Tensor, std::vector<std::int32_t>> choose(const torch::Tensor& logits, TokenChooser& chooser) const;

    torch_onnx::OnnxProgram program_;
    torch::Device device_;
    torch::ScalarType float_type_;
    DecoderInfo info_;
    std::size_t input_ids_ = 0, attention_mask_ = 0, position_ids_ = 0, logits_ = 0;
    std::vector<PastInput> past_;
    GenerationRequest request_;
    torch::Tensor prompts_, mask_, positions_;  // mask and positions for input + output tokens, narrowed per step
};

}  // namespace inferbench
