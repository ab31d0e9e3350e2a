#include "backends/onnxruntime/ort_generation.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "backends/token_choice.hpp"
#include "core/error.hpp"
#include "models/onnx_decoder.hpp"
#include "models/onnx_fp16.hpp"

namespace inferbench {
namespace {

std::string input_name(const Ort::Session& session, std::size_t index) {
    Ort::AllocatorWithDefaultOptions allocator;
    return session.GetInputNameAllocated(index, allocator).get();
}

// The last position's logits of each sequence as float32: [batch, vocab] out of [batch, sequence, vocab], copied
// row by row from device memory on `stream` where given (the rest of the logits never leaves the GPU).
std::vector<float> last_logits(const Ort::Value& logits, const cuda::StreamHandle* stream) {
    const auto info = logits.GetTensorTypeAndShapeInfo();
    const std::vector<std::int64_t> shape = info.GetShape();
    if (shape.size() != 3) throw std::runtime_error("the decoder's logits are not [batch, sequence, vocab]");
    const bool half = info.GetElementType() == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    const std::size_t batch = static_cast<std::size_t>(shape[0]), sequence = static_cast<std::size_t>(shape[1]),
                      vocab = static_cast<std::size_t>(shape[2]), row_bytes = vocab * (half ? 2 : 4);
    const auto* all = static_cast<const std::byte*>(logits.GetTensorRawData());
    std::vector<std::byte> last(batch * row_bytes);
    for (std::size_t b = 0; b < batch; ++b) {
        const std::byte* row = all + (b * sequence + sequence - 1) * row_bytes;
        if (stream != nullptr)
            cuda::copy_async(last.data() + b * row_bytes, row, row_bytes, cuda::CopyKind::device_to_host,
                             stream->get());
        else
            std::copy_n(row, row_bytes, last.data() + b * row_bytes);
    }
    if (stream != nullptr) stream->synchronize();
    std::vector<float> rows(batch * vocab);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (half) {
            std::uint16_t bits = 0;
            std::memcpy(&bits, last.data() + 2 * i, sizeof bits);
            rows[i] = models::onnx::from_fp16(bits);
        } else {
            std::memcpy(&rows[i], last.data() + 4 * i, sizeof(float));
        }
    }
    return rows;
}

}  // namespace

bool is_out_of_memory(std::string_view message) {
    for (const std::string_view words :
         {"Failed to allocate memory", "out of memory", "bad_alloc", "Available memory of"}) {
        if (message.find(words) != std::string_view::npos) return true;
    }
    return false;
}

OrtGeneration::OrtGeneration(Ort::Session& session, const std::string& model_path, const OrtMemoryInfo* device_memory,
                             const cuda::StreamHandle* stream)
    : session_(session), model_path_(model_path), device_memory_(device_memory), stream_(stream) {
    info_.shape = models::decoder_shape_from_onnx(model_path);
    for (std::size_t i = 0; i < session_.GetInputCount(); ++i) {
        const std::string name = input_name(session_, i);
        if (!name.starts_with("past_key_values.")) continue;
        past_names_.push_back(name);
        present_names_.push_back("present." + name.substr(std::string_view("past_key_values.").size()));
        kv_type_ = session_.GetInputTypeInfo(i).GetTensorTypeAndShapeInfo().GetElementType();
    }
    if (kv_type_ != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT && kv_type_ != ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16)
        throw UserError(fmt::format("{}: the decoder's KV cache is neither float32 nor float16", model_path));
    const bool half = kv_type_ == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16;
    info_.kv_dtype = half ? DType::f16 : DType::f32;
    info_.weight_bytes = models::decoder_weight_bytes_from_onnx(model_path);
}

void OrtGeneration::prepare(const GenerationRequest& request) {
    const std::int64_t context = request.input_tokens + request.output_tokens;
    if (context > info_.shape.max_context)
        throw UserError(fmt::format("{}: {} input + {} output tokens exceed the model's context of {} tokens",
                                    model_path_, request.input_tokens, request.output_tokens, info_.shape.max_context));
    if (request.input_tokens <= 0 || request.output_tokens <= 0 || request.batch <= 0 ||
        static_cast<std::int64_t>(request.prompts.size()) != request.batch * request.input_tokens)
        throw std::invalid_argument("prepare_generation(): prompts are not batch x input_tokens");
    request_ = request;
    prepared_ = true;
}

std::vector<Ort::Value> OrtGeneration::empty_cache() const {
    static float nothing = 0;  // a zero-sized tensor still needs an address
    const auto cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    const std::vector<std::int64_t> shape{request_.batch, info_.shape.kv_heads, 0, info_.shape.head_dim};
    std::vector<Ort::Value> cache;
    for (std::size_t i = 0; i < past_names_.size(); ++i)
        cache.push_back(Ort::Value::CreateTensor(cpu, &nothing, 0, shape.data(), shape.size(), kv_type_));
    return cache;
}

std::vector<float> OrtGeneration::run(StepInputs& step) {
    const auto cpu = Ort::MemoryInfo::CreateCpu(OrtArenaAllocator, OrtMemTypeDefault);
    const auto int64_tensor = [&](std::vector<std::int64_t>& data, const std::vector<std::int64_t>& shape) {
        return Ort::Value::CreateTensor<std::int64_t>(cpu, data.data(), data.size(), shape.data(), shape.size());
    };
    Ort::Value ids = int64_tensor(step.ids, step.ids_shape);
    Ort::Value mask = int64_tensor(step.mask, step.mask_shape);
    Ort::Value positions = int64_tensor(step.positions, step.ids_shape);
    Ort::IoBinding binding(session_);
    binding.BindInput("input_ids", ids);
    binding.BindInput("attention_mask", mask);
    binding.BindInput("position_ids", positions);
    for (std::size_t i = 0; i < past_names_.size(); ++i) binding.BindInput(past_names_[i].c_str(), cache_[i]);
    // The outputs stay where the provider computes: device memory on a GPU, no copy to the host.
    const auto bind_output = [&](const char* name) {
        if (device_memory_ != nullptr)
            binding.BindOutput(name, device_memory_);
        else
            binding.BindOutput(name, cpu);
    };
    bind_output("logits");
    for (const std::string& name : present_names_) bind_output(name.c_str());
    try {
        session_.Run(Ort::RunOptions(), binding);
    } catch (const Ort::Exception& e) {
        if (is_out_of_memory(e.what()))
            throw std::runtime_error(fmt::format(
                "out of memory: batch {} x {} tokens of {}'s KV cache and activations do not fit (ONNX Runtime: {})",
                request_.batch, step.mask_shape[1], model_path_, e.what()));
        throw std::runtime_error(fmt::format("ONNX Runtime failed to run decoder {}: {}", model_path_, e.what()));
    }
    std::vector<Ort::Value> outputs = binding.GetOutputValues();
    std::vector<float> logits = last_logits(outputs[0], device_memory_ != nullptr ? stream_ : nullptr);
    cache_.clear();
    for (std::size_t i = 1; i < outputs.size(); ++i) cache_.push_back(std::move(outputs[i]));
    return logits;
}

void OrtGeneration::generate(TokenSink& sink) {
    if (!prepared_) throw std::logic_error("OrtGeneration::generate() before prepare()");
    const std::int64_t batch = request_.batch, input = request_.input_tokens;
    TokenChooser chooser(request_.sampling, request_.seed);
    const auto vocab = static_cast<std::size_t>(info_.shape.vocab);
    cache_ = empty_cache();
    StepInputs step;
    step.ids.assign(request_.prompts.begin(), request_.prompts.end());
    step.ids_shape = {batch, input};
    for (std::int64_t b = 0; b < batch; ++b) {
        for (std::int64_t p = 0; p < input; ++p) step.positions.push_back(p);
    }
    for (std::int64_t produced = 0; produced < request_.output_tokens; ++produced) {
        const std::int64_t total = input + produced;  // tokens in the cache after this step
        step.mask.assign(static_cast<std::size_t>(batch * total), 1);
        step.mask_shape = {batch, total};
        const std::vector<float> logits = run(step);
        std::vector<std::int32_t> tokens;
        for (std::size_t row = 0; row + vocab <= logits.size(); row += vocab)
            tokens.push_back(chooser.choose(std::span(logits).subspan(row, vocab)));
        sink.step(tokens);
        if (sink.stop_requested()) break;
        step.ids.assign(tokens.begin(), tokens.end());
        step.ids_shape = {batch, 1};
        step.positions.assign(static_cast<std::size_t>(batch), total);
    }
    cache_.clear();
}

}  // namespace inferbench
