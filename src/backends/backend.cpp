#include "backends/backend.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "backends/model_spec_support.hpp"
#include "core/error.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {

std::string_view to_string(DType t) {
    switch (t) {
        case DType::f32: return "float32";
        case DType::f16: return "float16";
        case DType::bf16: return "bfloat16";
        case DType::f64: return "float64";
        case DType::i8: return "int8";
        case DType::u8: return "uint8";
        case DType::i32: return "int32";
        case DType::i64: return "int64";
        case DType::boolean: return "bool";
    }
    return "?";
}

std::string_view to_string(OptionType type) {
    switch (type) {
        case OptionType::text: return "text";
        case OptionType::path: return "path";
        case OptionType::flag: return "bool";
        case OptionType::count: return "integer";
        case OptionType::number: return "number";
        case OptionType::choice: return "choice";
        case OptionType::list: return "list";
    }
    return "?";
}

std::optional<DType> parse_dtype(std::string_view text) {
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32,
                              DType::i64, DType::boolean}) {
        if (to_string(dtype) == text) return dtype;
    }
    return std::nullopt;
}

std::size_t size_of(DType t) {
    switch (t) {
        case DType::f64:
        case DType::i64: return 8;
        case DType::f32:
        case DType::i32: return 4;
        case DType::f16:
        case DType::bf16: return 2;
        case DType::i8:
        case DType::u8:
        case DType::boolean: return 1;
    }
    return 1;
}

std::int64_t TensorInfo::element_count() const {
    return element_count_or_throw(fmt::format("input {}", name), shape);
}

std::size_t TensorInfo::byte_size() const {
    return byte_size_or_throw(fmt::format("input {}", name), shape, size_of(dtype));
}

OwnLoopReport Backend::run_own_loop(const LoopSettings& /*settings*/, IterationSink& /*sink*/) {
    throw std::logic_error(fmt::format("backend {} runs in-process and has no loop of its own", name()));
}

ConvertedModel Backend::convert_model(const std::string& model_path, const BenchmarkSpec& /*spec*/) {
    return {model_path, {}, {}};
}

std::vector<LayerTime> Backend::profile_layers(const std::atomic<std::int32_t>& /*stop*/) { return {}; }

std::vector<HostTensor> Backend::last_outputs() const {
    throw UserError(fmt::format("backend {} does not hand back its outputs, so they cannot be checked", name()));
}

std::optional<std::string> Backend::unsupported_reason(const BenchmarkSpec& spec) const {
    const Capabilities caps = capabilities();
    if (std::find(caps.devices.begin(), caps.devices.end(), spec.device.kind) == caps.devices.end())
        return fmt::format("backend {} does not run on {}", name(), to_string(spec.device));
    if (std::find(caps.precisions.begin(), caps.precisions.end(), spec.precision) == caps.precisions.end())
        return fmt::format("backend {} has no {} support", name(), to_string(spec.precision));
    if (!caps.dynamic_batch && spec.batch_size != 1)
        return fmt::format("backend {} runs batch size 1 only", name());
    if (spec.generation.active() && !caps.generates)
        return fmt::format("backend {} runs no generation loop; decoder models run on llamacpp, onnxruntime, torch "
                           "or torch-generate",
                           name());
    return model_spec_refusal(name(), caps, spec);
}

DecoderInfo Backend::decoder_info() const {
    throw UserError(fmt::format("backend {} runs no generation loop", name()));
}

void Backend::prepare_generation(const GenerationRequest& /*request*/) {
    throw UserError(fmt::format("backend {} runs no generation loop", name()));
}

void Backend::generate(TokenSink& /*sink*/) {
    throw UserError(fmt::format("backend {} runs no generation loop", name()));
}

}  // namespace inferbench
