#include "backends/torch/torch_decoder.hpp"

#include <fmt/format.h>

#include "backends/token_choice.hpp"
#include "core/error.hpp"
#include "models/onnx_decoder.hpp"

namespace inferbench {
namespace {

std::size_t index_of(const std::vector<models::onnx::OnnxValueInfo>& values, const std::string& name,
                     const std::string& path, std::string_view what) {
    for (std::size_t i = 0; i < values.size(); ++i)
        if (values[i].name == name) return i;
    throw UserError(fmt::format("{}: the decoder has no {} {} (a decoder with the KV cache as inputs and outputs "
                                "names input_ids, attention_mask, position_ids, past_key_values.N.key/value, logits and "
                                "present.N.key/value)",
                                path, what, name));
}

DType dtype_of(torch::ScalarType type) {
    return type == torch::kHalf ? DType::f16 : type == torch::kBFloat16 ? DType::bf16 : DType::f32;
}

}  // namespace

TorchDecoder::TorchDecoder(const std::string& path, torch::Device device, torch::ScalarType float_type)
    : program_(torch_onnx::OnnxProgram::load(path)), device_(device), float_type_(float_type) {
    info_.shape = models::decoder_shape_from_onnx(path);
    info_.kv_dtype = dtype_of(float_type);
    info_.weight_bytes = parameter_count(info_.shape) * static_cast<std::int64_t>(size_of(info_.kv_dtype));
    program_.to(device, float_type, /*channels_last=*/false);
    const auto& inputs = program_.inputs();
    input_ids_ = index_of(inputs, "input_ids", path, "input");
    attention_mask_ = index_of(inputs, "attention_mask", path, "input");
    position_ids_ = index_of(inputs, "position_ids", path, "input");
    logits_ = index_of(program_.outputs(), "logits", path, "output");
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::string& name = inputs[i].name;
        if (i == input_ids_ || i == attention_mask_ || i == position_ids_) continue;
        if (!name.starts_with("past_key_values."))
            throw UserError(fmt::format("{}: input {} is not one a decoder step feeds (input_ids, attention_mask, "
                                        "position_ids, past_key_values.*)",
                                        path, name));
        const std::string present = "present." + name.substr(std::string_view("past_key_values.").size());
        past_.push_back({i, index_of(program_.outputs(), present, path, "output")});
    }
}

void TorchDecoder::prepare(const GenerationRequest& request) {
    c10::InferenceMode guard;
    request_ = request;
    const std::int64_t total = request.input_tokens + request.output_tokens;
    if (total > info_.shape.max_context)
        throw UserError(fmt::format("{} input + {} output tokens exceed the decoder's context of {} tokens",
                                    request.input_tokens, request.output_tokens, info_.shape.max_context));
    const auto ids = torch::tensor(request.prompts, torch::kLong).view({request.batch, request.input_tokens});
    prompts_ = ids.to(device_);
    const auto longs = torch::TensorOptions().dtype(torch::kLong).device(device_);
    mask_ = torch::ones({request.batch, total}, longs);
    positions_ = torch::arange(total, longs).unsqueeze(0).expand({request.batch, total}).contiguous();
}

std::vector<torch::Tensor> TorchDecoder::prefill_inputs() const {
    std::vector<torch::Tensor> inputs(program_.inputs().size());
    const std::int64_t n = request_.input_tokens;
    inputs[input_ids_] = prompts_;
    inputs[attention_mask_] = mask_.narrow(1, 0, n);
    inputs[position_ids_] = positions_.narrow(1, 0, n);
    const auto empty = torch::empty({request_.batch, info_.shape.kv_heads, 0, info_.shape.head_dim},
                                    torch::TensorOptions().dtype(float_type_).device(device_));
    for (const PastInput& past : past_) inputs[past.input] = empty;
    return inputs;
}

std::pair<torch::Tensor, std::vector<std::int32_t>> TorchDecoder::choose(const torch::Tensor& logits,
                                                                          TokenChooser& chooser) const {
    std::vector<std::int32_t> tokens(static_cast<std::size_t>(request_.batch));
    if (request_.sampling == Sampling::greedy) {
        // On the device: only batch token ids come back. argmax keeps the first of equal values (the lowest id).
        const torch::Tensor chosen = logits.argmax(-1, /*keepdim=*/true);
        const torch::Tensor host = chosen.to(torch::kCPU).to(torch::kInt).contiguous();
        std::copy_n(host.data_ptr<std::int32_t>(), tokens.size(), tokens.begin());
        return {chosen, tokens};
    }
    const torch::Tensor host = logits.to(torch::kCPU).to(torch::kFloat).contiguous();
    const auto vocab = static_cast<std::size_t>(host.size(1));
    for (std::size_t b = 0; b < tokens.size(); ++b)
        tokens[b] = chooser.choose(std::span<const float>(host.data_ptr<float>() + b * vocab, vocab));
    const torch::Tensor chosen = torch::tensor(std::vector<std::int64_t>(tokens.begin(), tokens.end()), torch::kLong);
    return {chosen.view({request_.batch, 1}).to(device_), tokens};
}

void TorchDecoder::generate(TokenSink& sink) {
    c10::InferenceMode guard;
    TokenChooser chooser(request_.sampling, request_.seed);
    std::vector<torch::Tensor> inputs = prefill_inputs();
    for (std::int64_t step = 0; step < request_.output_tokens; ++step) {
        std::vector<torch::Tensor> outputs = program_.run(inputs);
        auto [chosen, tokens] = choose(outputs[logits_].select(1, -1), chooser);
        sink.step(tokens);
        if (step + 1 == request_.output_tokens || sink.stop_requested()) return;
        const std::int64_t past = request_.input_tokens + step;  // tokens in the cache the next step reads
        inputs[input_ids_] = chosen;
        inputs[attention_mask_] = mask_.narrow(1, 0, past + 1);
        inputs[position_ids_] = positions_.narrow(1, past, 1);
        for (const PastInput& p : past_) inputs[p.input] = std::move(outputs[p.present]);
    }
}

}  // namespace inferbench
