// decoder_shape_from_onnx: an ONNX decoder's shape, from our writer's metadata or a user's export's interface and
// Hugging Face-named weights. Reads the graph's description only (models/onnx_reader's signature).
#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/tensor_size.hpp"
#include "models/onnx_decoder.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench::models {

namespace {

using onnx::OnnxGraphSignature;
using Metadata = std::map<std::string, std::string, std::less<>>;

constexpr std::string_view kMetadataPrefix = "inferbench.decoder.";

std::optional<double> number(const Metadata& metadata, std::string_view key) {
    const auto it = metadata.find(fmt::format("{}{}", kMetadataPrefix, key));
    if (it == metadata.end()) return std::nullopt;
    try {
        std::size_t used = 0;
        const double value = std::stod(it->second, &used);
        if (used == it->second.size()) return value;
    } catch (const std::exception&) {
    }
    return std::nullopt;
}

// Our writer's shape, or nothing where the file does not carry all of it.
std::optional<DecoderShape> shape_from_metadata(const Metadata& m) {
    DecoderShape s;
    const auto integer = [&](std::string_view key, std::int64_t& out) {
        const auto v = number(m, key);
        // A whole number within what any decoder has; anything else is not our writer's, so the shape is read
        // from the weights instead.
        if (!v || !(*v >= 0 && *v <= 9e15) || *v != std::floor(*v)) return false;
        out = static_cast<std::int64_t>(*v);
        return true;
    };
    const auto real = [&](std::string_view key, double& out) {
        const auto v = number(m, key);
        if (v) out = *v;
        return v.has_value();
    };
    std::int64_t tied = 0;
    const bool whole = integer("layers", s.layers) && integer("hidden", s.hidden) && integer("heads", s.heads) &&
                       integer("kv_heads", s.kv_heads) && integer("head_dim", s.head_dim) &&
                       integer("intermediate", s.intermediate) && integer("vocab", s.vocab) &&
                       integer("max_context", s.max_context) && integer("tied_embeddings", tied) &&
                       real("rope_theta", s.rope_theta) && real("rms_eps", s.rms_eps);
    s.tied_embeddings = tied != 0;
    return whole ? std::optional<DecoderShape>(s) : std::nullopt;
}

const onnx::OnnxValueInfo* find_input(const OnnxGraphSignature& sig, const std::string& name) {
    const auto it = std::ranges::find(sig.inputs, name, &onnx::OnnxValueInfo::name);
    return it == sig.inputs.end() ? nullptr : &*it;
}

std::optional<std::int64_t> fixed_dim(const onnx::OnnxValueInfo& info, std::size_t index) {
    if (!info.has_shape || info.dims.size() <= index) return std::nullopt;
    const auto* value = std::get_if<std::int64_t>(&info.dims[index]);
    return value != nullptr && *value > 0 ? std::optional(*value) : std::nullopt;
}

// The dims of the first initializer whose name ends with `suffix` ("layers.0.self_attn.q_proj.weight").
const std::vector<std::int64_t>* weight_dims(const OnnxGraphSignature& sig, std::string_view suffix) {
    const auto it = std::ranges::find_if(
        sig.initializers, [&](const onnx::OnnxTensor& t) { return t.name.ends_with(suffix) && t.dims.size() == 2; });
    return it == sig.initializers.end() ? nullptr : &it->dims;
}

// A linear's width other than `hidden`, whichever way the export stored it ([out, in] or MatMul's [in, out]).
std::int64_t other_width(const std::vector<std::int64_t>& dims, std::int64_t hidden) {
    return dims[0] == hidden ? dims[1] : dims[0];
}

// What a user's export says: its past inputs and its Hugging Face-named weights. Returns the first thing missing.
std::optional<std::string> read_export_shape(const OnnxGraphSignature& sig, DecoderShape& s) {
    while (find_input(sig, fmt::format("past_key_values.{}.key", s.layers)) != nullptr) ++s.layers;
    const onnx::OnnxValueInfo& past = *find_input(sig, "past_key_values.0.key");
    const auto kv_heads = fixed_dim(past, 1);
    const auto head_dim = fixed_dim(past, 3);
    if (!kv_heads || !head_dim)
        return std::string("past_key_values.0.key with fixed [batch, kv_heads, past, head_dim] dimensions");
    s.kv_heads = *kv_heads;
    s.head_dim = *head_dim;
    const auto* embedding = weight_dims(sig, "embed_tokens.weight");
    if (embedding == nullptr) return std::string("a weight named *embed_tokens.weight");
    s.vocab = (*embedding)[0];
    s.hidden = (*embedding)[1];
    const auto* q = weight_dims(sig, "layers.0.self_attn.q_proj.weight");
    if (q == nullptr) return std::string("a weight named *layers.0.self_attn.q_proj.weight");
    s.heads = other_width(*q, s.hidden) / s.head_dim;
    const auto* gate = weight_dims(sig, "layers.0.mlp.gate_proj.weight");
    if (gate == nullptr) return std::string("a weight named *layers.0.mlp.gate_proj.weight");
    s.intermediate = other_width(*gate, s.hidden);
    s.tied_embeddings = weight_dims(sig, "lm_head.weight") == nullptr;
    s.max_context = kMaxGenerationTokens;  // the file does not say; an engine refuses longer contexts itself
    return std::nullopt;
}

}  // namespace

DecoderShape decoder_shape_from_onnx(const std::filesystem::path& path) {
    const OnnxGraphSignature sig = onnx::read_onnx_signature(path);
    if (find_input(sig, "past_key_values.0.key") == nullptr) {
        throw UserError(
            fmt::format("{}: not an ONNX decoder with a KV cache: it has no input past_key_values.0.key; "
                        "export the model with its past key/values (optimum: --task text-generation-with-past)",
                        path.string()));
    }
    if (auto shape = shape_from_metadata(sig.metadata)) {
        if (const auto problem = shape_problem(*shape))
            throw UserError(fmt::format("{}: the decoder's metadata gives {}", path.string(), *problem));
        return *shape;
    }
    DecoderShape shape;
    if (const auto missing = read_export_shape(sig, shape)) {
        throw UserError(
            fmt::format("{}: cannot read the decoder's shape: it lacks {}; inferbench reads Llama-architecture "
                        "exports with Hugging Face weight names",
                        path.string(), *missing));
    }
    if (const auto problem = shape_problem(shape))
        throw UserError(fmt::format("{}: the decoder's weights give {}", path.string(), *problem));
    return shape;
}

std::int64_t decoder_weight_bytes_from_onnx(const std::filesystem::path& path) {
    std::int64_t bytes = 0;
    for (const onnx::OnnxTensor& t : onnx::read_onnx_signature(path).initializers) {
        if (t.dims.empty() || t.name.starts_with(kRotaryTablePrefix)) continue;
        // Dimensions read from the file: counted with overflow checks, a size no file holds refused.
        const std::int64_t count = element_count_or_throw(fmt::format("weight {} of {}", t.name, path.string()), t.dims);
        const auto bits = checked_mul(count, static_cast<std::int64_t>(onnx::element_bits(t.data_type)));
        if (!bits || bytes > std::numeric_limits<std::int64_t>::max() - *bits / 8)
            throw UserError(fmt::format("{}: its weights' sizes overflow a 64-bit count; the file is damaged",
                                        path.string()));
        bytes += *bits / 8;
    }
    return bytes;
}

}  // namespace inferbench::models
