// The decoder's ONNX graph. Shapes in the comments: B batch, S new tokens, P past tokens, T = P + S, N = B * S,
// Hq query heads, Hkv key/value heads, R = Hq / Hkv, D head_dim. The residual stream is kept [N, hidden] so that
// every linear is one Gemm reading the [out, in] weight as it is stored.
#include "models/onnx_decoder.hpp"

#include <cmath>
#include <fstream>
#include <limits>
#include <numbers>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "models/decoder_weights.hpp"
#include "models/zoo_graph_ops.hpp"

namespace inferbench::models {

namespace {

using graph_ops::int64_constant;
using graph_ops::op;

constexpr std::int64_t kCastFloat = 1, kCastBool = 9, kCastFloat16 = 10;  // TensorProto.DataType, for Cast

struct Context {
    GraphBuilder& g;
    const DecoderShape& s;
    OnnxElemType type;  // of the weights, the KV cache, the activations and the logits
    // Shared values, made once.
    std::string q_shape;   // [B, S, Hq, D]
    std::string kv_shape;  // [B, S, Hkv, D]
    std::string cos, sin;  // [B, 1, S, D]
    std::string allowed;   // [B, 1, S, T] bool: causal and not padding
    std::string lowest;    // the most negative value of `type`: a masked score

    bool half() const { return type == OnnxElemType::float16; }
};

// A constant of the compute type (not a parameter).
std::string typed_scalar(Context& c, const std::string& name, float value) {
    c.g.add_initializer({.name = name, .dims = {}, .data = {value}, .is_parameter = false, .elem_type = c.type});
    return name;
}

std::string float_scalar(GraphBuilder& g, const std::string& name, float value) {
    g.add_initializer({.name = name, .dims = {}, .data = {value}, .is_parameter = false});
    return name;
}

std::string int64_scalar(GraphBuilder& g, std::string name, std::int64_t value) {
    return op(g, "Constant", std::move(name), {}, {OnnxAttribute::of_int("value_int", value)});
}

std::string cast(GraphBuilder& g, std::string name, const std::string& x, std::int64_t to) {
    return op(g, "Cast", std::move(name), {x}, {OnnxAttribute::of_int("to", to)});
}

std::string transpose(GraphBuilder& g, std::string name, const std::string& x, std::vector<std::int64_t> perm) {
    return op(g, "Transpose", std::move(name), {x}, {OnnxAttribute::of_ints("perm", std::move(perm))});
}

// Adds decoder_weights' tensor, made when the model is written.
std::string weight(Context& c, const DecoderTensor& tensor, std::uint64_t seed) {
    c.g.add_initializer({.name = tensor.name,
                         .dims = tensor.shape,
                         .data = {},
                         .is_parameter = true,
                         .elem_type = c.type,
                         .fill = [tensor, seed](std::span<float> out) { fill_decoder_tensor(tensor, seed, out); }});
    return tensor.name;
}

// x [N, in] times the [out, in] weight, transposed: [N, out].
std::string linear(Context& c, const std::string& name, const std::string& x, const std::string& w) {
    return op(c.g, "Gemm", name, {x, w}, {OnnxAttribute::of_int("transB", 1)});
}

// x / sqrt(mean(x^2) + eps) * weight in fp32 (the spelling the LibTorch interpreter fuses into one RMSNorm).
std::string rms_norm(Context& c, const std::string& name, const std::string& x, const std::string& w) {
    const std::string x32 = c.half() ? cast(c.g, name + ".to_fp32", x, kCastFloat) : x;
    const std::string square = op(c.g, "Pow", name + ".Pow", {x32, "const.two"});
    const std::string mean = op(c.g, "ReduceMean", name + ".ReduceMean", {square},
                                {OnnxAttribute::of_ints("axes", {-1}), OnnxAttribute::of_int("keepdims", 1)});
    const std::string root = op(c.g, "Sqrt", name + ".Sqrt", {op(c.g, "Add", name + ".Add", {mean, "const.rms_eps"})});
    std::string normed = op(c.g, "Div", name + ".Div", {x32, root});
    if (c.half()) normed = cast(c.g, name + ".to_fp16", normed, kCastFloat16);
    return op(c.g, "Mul", name, {normed, w});
}

// cos(position * theta^(-2i/D)) for i < D/2, [max_context, D/2], computed in double and rounded once.
std::vector<float> rotary_table(const DecoderShape& s, bool sine) {
    const std::int64_t half = s.head_dim / 2;
    std::vector<float> table(static_cast<std::size_t>(s.max_context * half));
    for (std::int64_t i = 0; i < half; ++i) {
        const double inv_freq =
            1.0 / std::pow(s.rope_theta, static_cast<double>(2 * i) / static_cast<double>(s.head_dim));
        for (std::int64_t p = 0; p < s.max_context; ++p) {
            const double angle = static_cast<double>(p) * inv_freq;
            table[static_cast<std::size_t>(p * half + i)] =
                static_cast<float>(sine ? std::sin(angle) : std::cos(angle));
        }
    }
    return table;
}

// Gather(table, position_ids) [B, S, D/2] doubled to [B, S, D] (Hugging Face's cat(freqs, freqs)), [B, 1, S, D].
std::string rotary(Context& c, const std::string& name, bool sine) {
    const std::string table = fmt::format("{}{}_table", kRotaryTablePrefix, name);
    c.g.add_initializer({.name = table,
                         .dims = {c.s.max_context, c.s.head_dim / 2},
                         .data = rotary_table(c.s, sine),
                         .is_parameter = false,
                         .elem_type = c.type});
    const std::string rows = op(c.g, "Gather", "rotary." + name + ".Gather", {table, "position_ids"});
    const std::string full = graph_ops::concat(c.g, "rotary." + name + ".Concat", {rows, rows}, -1);
    return op(c.g, "Unsqueeze", "rotary." + name, {full, int64_constant(c.g, "rotary." + name + ".axes", {1})});
}

// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[D/2:], x[:D/2]).
std::string apply_rotary(Context& c, const std::string& name, const std::string& x) {
    c.g.add_node({"Split",
                  name + ".Split",
                  {x, "rotary.halves"},
                  {name + ".x1", name + ".x2"},
                  {OnnxAttribute::of_int("axis", -1)}});
    const std::string neg = op(c.g, "Neg", name + ".Neg", {name + ".x2"});
    const std::string rotated = graph_ops::concat(c.g, name + ".rotate_half", {neg, name + ".x1"}, -1);
    return op(c.g, "Add", name,
              {op(c.g, "Mul", name + ".cos", {x, c.cos}), op(c.g, "Mul", name + ".sin", {rotated, c.sin})});
}

// [N, heads * D] to [B, heads, S, D].
std::string split_heads(Context& c, const std::string& name, const std::string& x, const std::string& shape) {
    return transpose(c.g, name + ".Transpose", op(c.g, "Reshape", name + ".Reshape", {x, shape}), {0, 2, 1, 3});
}

// softmax over the last axis, in fp32 as Hugging Face computes it.
std::string softmax(Context& c, const std::string& name, const std::string& x) {
    const std::string x32 = c.half() ? cast(c.g, name + ".to_fp32", x, kCastFloat) : x;
    const std::string p =
        op(c.g, "Softmax", c.half() ? name + ".Softmax" : name, {x32}, {OnnxAttribute::of_int("axis", -1)});
    return c.half() ? cast(c.g, name, p, kCastFloat16) : p;
}

// Grouped-query attention without copying the cache per query head: the R query heads of one key/value head
// are folded into its rows ([B, Hkv, R * S, D]), scored against that head's keys, and unfolded for the mask.
std::string attention(Context& c, const std::string& p, std::int64_t layer, const std::string& x, std::uint64_t seed,
                      const std::vector<DecoderTensor>& tensors, std::size_t& next) {
    const auto w = [&]() { return weight(c, tensors[next++], seed); };
    const std::string wq = w(), wk = w(), wv = w(), wo = w();
    const std::string a = p + "self_attn.";
    const std::string q =
        apply_rotary(c, a + "q_rot", split_heads(c, a + "q", linear(c, a + "q_proj", x, wq), c.q_shape));
    const std::string k =
        apply_rotary(c, a + "k_rot", split_heads(c, a + "k", linear(c, a + "k_proj", x, wk), c.kv_shape));
    const std::string v = split_heads(c, a + "v", linear(c, a + "v_proj", x, wv), c.kv_shape);
    const std::string keys = fmt::format("present.{}.key", layer);
    const std::string values = fmt::format("present.{}.value", layer);
    graph_ops::concat(c.g, keys, {fmt::format("past_key_values.{}.key", layer), k}, 2);
    graph_ops::concat(c.g, values, {fmt::format("past_key_values.{}.value", layer), v}, 2);

    const std::string grouped = op(c.g, "Reshape", a + "q_grouped", {q, "shape.grouped"});
    std::string scores = op(c.g, "MatMul", a + "scores", {grouped, transpose(c.g, a + "keys_t", keys, {0, 1, 3, 2})});
    scores = op(c.g, "Mul", a + "scaled", {scores, "const.attention_scale"});
    scores = op(c.g, "Reshape", a + "scores_per_head", {scores, "shape.per_head"});
    scores = op(c.g, "Where", a + "masked", {c.allowed, scores, c.lowest});
    const std::string probs =
        op(c.g, "Reshape", a + "probs_grouped", {softmax(c, a + "probs", scores), "shape.grouped_rows"});
    std::string context = op(c.g, "MatMul", a + "context", {probs, values});
    context = op(c.g, "Reshape", a + "context_per_head", {context, "shape.per_head"});
    context = transpose(c.g, a + "context.Transpose", context, {0, 2, 1, 3});
    context = op(c.g, "Reshape", a + "context.Reshape", {context, "shape.merge_heads"});
    return linear(c, a + "o_proj", context, wo);
}

std::string feed_forward(Context& c, const std::string& p, const std::string& x, std::uint64_t seed,
                         const std::vector<DecoderTensor>& tensors, std::size_t& next) {
    const std::string wg = weight(c, tensors[next++], seed);
    const std::string wu = weight(c, tensors[next++], seed);
    const std::string wd = weight(c, tensors[next++], seed);
    const std::string m = p + "mlp.";
    const std::string gate = graph_ops::silu(c.g, m + "act", linear(c, m + "gate_proj", x, wg));
    const std::string h = op(c.g, "Mul", m + "gated", {gate, linear(c, m + "up_proj", x, wu)});
    return linear(c, m + "down_proj", h, wd);
}

// Reshape targets and constants every layer shares.
void add_shared_values(Context& c) {
    GraphBuilder& g = c.g;
    const DecoderShape& s = c.s;
    const std::string ids_shape = op(g, "Shape", "shape.input_ids", {"input_ids"});
    c.q_shape =
        graph_ops::concat(g, "shape.q", {ids_shape, int64_constant(g, "shape.q_heads", {s.heads, s.head_dim})}, 0);
    c.kv_shape =
        graph_ops::concat(g, "shape.kv", {ids_shape, int64_constant(g, "shape.kv_heads", {s.kv_heads, s.head_dim})}, 0);
    int64_constant(g, "shape.grouped", {0, s.kv_heads, -1, s.head_dim});  // [B, Hq, S, D] -> [B, Hkv, R*S, D]
    int64_constant(g, "shape.grouped_rows", {0, s.kv_heads, -1, 0});      // [B, Hq, S, T] -> [B, Hkv, R*S, T]
    int64_constant(g, "shape.per_head", {0, s.heads, -1, 0});             // and back
    int64_constant(g, "shape.merge_heads", {-1, s.heads * s.head_dim});
    int64_constant(g, "shape.flat", {-1});
    int64_constant(g, "rotary.halves", {s.head_dim / 2, s.head_dim / 2});
    float_scalar(g, "const.two", 2.0F);
    float_scalar(g, "const.rms_eps", static_cast<float>(s.rms_eps));
    typed_scalar(c, "const.attention_scale", static_cast<float>(1.0 / std::sqrt(static_cast<double>(s.head_dim))));
    c.lowest = typed_scalar(c, "const.lowest", std::numeric_limits<float>::lowest());  // fp16: clamped to -65504
    c.cos = rotary(c, "cos", false);
    c.sin = rotary(c, "sin", true);
}

// Query position P + j attends key position t when t <= P + j and attention_mask[b, t] is 1.
void add_mask(Context& c) {
    GraphBuilder& g = c.g;
    const std::string m = "mask.";
    const std::string total =
        op(g, "Gather", m + "total", {op(g, "Shape", m + "Shape", {"attention_mask"}), int64_scalar(g, m + "one", 1)});
    const std::string fresh = op(g, "Gather", m + "fresh", {"shape.input_ids", m + "one"});
    const std::string step = m + "one";
    const std::string keys = op(g, "Range", m + "keys", {int64_scalar(g, m + "zero", 0), total, step});
    const std::string queries = op(g, "Range", m + "queries", {op(g, "Sub", m + "past", {total, fresh}), total, step});
    const std::string causal =
        op(g, "LessOrEqual", m + "causal",
           {op(g, "Unsqueeze", m + "keys_row", {keys, int64_constant(g, m + "axes0", {0})}),
            op(g, "Unsqueeze", m + "queries_col", {queries, int64_constant(g, m + "axes1", {1})})});
    const std::string padding =
        cast(g, m + "padding",
             op(g, "Unsqueeze", m + "mask4d", {"attention_mask", int64_constant(g, m + "axes12", {1, 2})}), kCastBool);
    c.allowed = op(g, "And", m + "allowed", {causal, padding});
}

void add_interface(Context& c) {
    const auto dim = [](const char* name) { return OnnxDim::symbolic(name); };
    const OnnxDim batch = dim("batch_size"), sequence = dim("sequence_length");
    c.g.add_input("input_ids", OnnxElemType::int64, {batch, sequence});
    c.g.add_input("attention_mask", OnnxElemType::int64, {batch, dim("total_sequence_length")});
    c.g.add_input("position_ids", OnnxElemType::int64, {batch, sequence});
    const auto cache = [&](const char* length) {
        return std::vector<OnnxDim>{batch, OnnxDim::fixed(c.s.kv_heads), dim(length), OnnxDim::fixed(c.s.head_dim)};
    };
    for (std::int64_t i = 0; i < c.s.layers; ++i) {
        for (const char* part : {"key", "value"})
            c.g.add_input(fmt::format("past_key_values.{}.{}", i, part), c.type, cache("past_sequence_length"));
    }
    c.g.add_output("logits", c.type, {batch, sequence, OnnxDim::fixed(c.s.vocab)});
    for (std::int64_t i = 0; i < c.s.layers; ++i) {
        for (const char* part : {"key", "value"})
            c.g.add_output(fmt::format("present.{}.{}", i, part), c.type, cache("total_sequence_length"));
    }
}

void add_shape_metadata(GraphBuilder& g, const DecoderShape& s) {
    g.add_metadata("inferbench.decoder.architecture", "llama");
    g.add_metadata("inferbench.decoder.layers", std::to_string(s.layers));
    g.add_metadata("inferbench.decoder.hidden", std::to_string(s.hidden));
    g.add_metadata("inferbench.decoder.heads", std::to_string(s.heads));
    g.add_metadata("inferbench.decoder.kv_heads", std::to_string(s.kv_heads));
    g.add_metadata("inferbench.decoder.head_dim", std::to_string(s.head_dim));
    g.add_metadata("inferbench.decoder.intermediate", std::to_string(s.intermediate));
    g.add_metadata("inferbench.decoder.vocab", std::to_string(s.vocab));
    g.add_metadata("inferbench.decoder.max_context", std::to_string(s.max_context));
    g.add_metadata("inferbench.decoder.tied_embeddings", s.tied_embeddings ? "1" : "0");
    g.add_metadata("inferbench.decoder.rope_theta", fmt::format("{}", s.rope_theta));
    g.add_metadata("inferbench.decoder.rms_eps", fmt::format("{}", s.rms_eps));
}

OnnxElemType element_type(Precision precision) {
    if (precision == Precision::fp32) return OnnxElemType::float32;
    if (precision == Precision::fp16) return OnnxElemType::float16;
    throw UserError(fmt::format("ONNX decoder: precision {} is not written; use fp32 or fp16", to_string(precision)));
}

std::int64_t weight_bytes(const GraphBuilder& g) {
    std::int64_t bytes = 0;
    for (const auto& init : g.initializers())
        bytes += init.element_count() * (init.elem_type == OnnxElemType::float16 ? 2 : 4);
    return bytes;
}

}  // namespace

GraphBuilder build_llama_onnx(const DecoderShape& shape, std::uint64_t seed, Precision precision) {
    if (const auto problem = shape_problem(shape))
        throw UserError(fmt::format("ONNX decoder: the shape has {}", *problem));
    GraphBuilder g("llama", seed);
    g.set_opset_version(kDecoderOpsetVersion);
    Context c{g, shape, element_type(precision), {}, {}, {}, {}, {}, {}};
    add_interface(c);
    add_shape_metadata(g, shape);
    add_shared_values(c);
    add_mask(c);

    const std::vector<DecoderTensor> tensors = decoder_tensors(shape);
    std::size_t next = 0;
    const std::string embedding = weight(c, tensors[next++], seed);
    const std::string flat_ids = op(g, "Reshape", "input_ids.flat", {"input_ids", "shape.flat"});
    std::string x = op(g, "Gather", "model.embed_tokens", {embedding, flat_ids});  // [N, hidden]
    for (std::int64_t i = 0; i < shape.layers; ++i) {
        const std::string p = fmt::format("model.layers.{}.", i);
        const std::string attn_norm = weight(c, tensors[next++], seed);
        const std::string attn =
            attention(c, p, i, rms_norm(c, p + "input_layernorm", x, attn_norm), seed, tensors, next);
        x = op(g, "Add", p + "attn_residual", {x, attn});
        const std::string mlp_norm = weight(c, tensors[next++], seed);
        const std::string mlp =
            feed_forward(c, p, rms_norm(c, p + "post_attention_layernorm", x, mlp_norm), seed, tensors, next);
        x = op(g, "Add", p + "mlp_residual", {x, mlp});
    }
    x = rms_norm(c, "model.norm", x, weight(c, tensors[next++], seed));
    const std::string head = shape.tied_embeddings ? embedding : weight(c, tensors[next++], seed);
    const std::string logits_shape =
        graph_ops::concat(g, "shape.logits", {"shape.input_ids", int64_constant(g, "shape.vocab", {shape.vocab})}, 0);
    op(g, "Reshape", "logits", {linear(c, "lm_head", x, head), logits_shape});
    return g;
}

std::string onnx_decoder_data_name(const std::filesystem::path& path) { return path.filename().string() + ".data"; }

void write_llama_onnx(const DecoderShape& shape, std::uint64_t seed, Precision precision,
                      const std::filesystem::path& path, std::int64_t inline_limit) {
    const GraphBuilder g = build_llama_onnx(shape, seed, precision);
    const bool external = weight_bytes(g) > inline_limit;
    std::optional<OutputFile> data;
    std::ofstream data_out;
    OnnxExternalData sink;
    if (external) {
        data.emplace(path.parent_path() / onnx_decoder_data_name(path));
        data_out.open(data->staging_path(), std::ios::binary);
        sink = OnnxExternalData{.out = &data_out, .location = onnx_decoder_data_name(path)};
    }
    OutputFile model(path);
    std::ofstream out(model.staging_path(), std::ios::binary);
    g.write(out, external ? &sink : nullptr);
    out.close();
    if (!out) model.fail("the model could not be written (disk full?)");
    if (data) {
        data_out.close();
        if (!data_out) data->fail("the weights could not be written (disk full?)");
        data->commit();
    }
    model.commit();
}

}  // namespace inferbench::models
