// BERT (Devlin et al. 2018, arXiv:1810.04805) with the SQuAD span head, as MLPerf Inference's
// BERT benchmark runs it: the MLPerf model is HuggingFace's BertForQuestionAnswering (BertModel
// without its pooler, plus qa_outputs = Linear(hidden, 2) on every token, split into start and end
// logits). Names follow that model's state_dict ("bert.encoder.layer.0.attention.self.query.weight"),
// but Linear weights are stored [in, out] for MatMul, as torch.onnx exports them.
//
// bert-large's file is ~1.34 GB of fp32 weights: under protobuf's 2 GB message limit, so one
// self-contained ModelProto (no external data) works; GraphBuilder::write() streams the weights.
#include <cmath>
#include <numeric>
#include <span>
#include <stdexcept>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace {

constexpr std::int64_t kOpsetWithLayerNorm = 17;
constexpr float kInitializerRange = 0.02F;  // BERT's initializer_range: the weights' std
constexpr float kLayerNormEpsilon = 1e-12F;
constexpr float kMaskedScore = -10000.0F;  // added to masked positions' attention scores
constexpr std::int64_t kOnnxFloat = 1;     // TensorProto.DataType FLOAT, for Cast

// Approximately N(0, std^2): the sum of four uniform 16-bit lanes of one draw (Irwin-Hall), bounded
// at +-3.46 std (BERT's TensorFlow code used a normal truncated at 2 std). The sum is exact in
// integers, then scaled by one double multiplication and one conversion: no step a compiler
// could contract into an FMA, so the bytes are the same everywhere.
void fill_normalish(WeightGenerator& gen, std::span<float> out, float std_dev) {
    constexpr double kLaneMax = 65535.0;
    // 2 * sum - 4 * 65535 is centred; its variance is 4 * 4 * (65536^2 - 1) / 12.
    const double scale = static_cast<double>(std_dev) / std::sqrt(16.0 * ((kLaneMax + 1) * (kLaneMax + 1) - 1) / 12.0);
    for (float& v : out) {
        const std::uint64_t bits = gen.next_u64();
        std::int64_t sum = 0;
        for (unsigned lane = 0; lane < 4; ++lane) sum += static_cast<std::int64_t>((bits >> (16U * lane)) & 0xFFFFU);
        v = static_cast<float>(static_cast<double>(2 * sum - 4 * 65535) * scale);
    }
}

// One single-output node called `name` whose output value is also `name`.
std::string op(GraphBuilder& g, std::string_view type, std::string name, std::vector<std::string> inputs,
               std::vector<OnnxAttribute> attributes = {}) {
    g.add_node({std::string(type), name, std::move(inputs), {name}, std::move(attributes)});
    return name;
}

// int64 tensors (shapes, axes, position ids) are Constant nodes, as the builder's initializers are float.
std::string int64_constant(GraphBuilder& g, std::string name, std::vector<std::int64_t> values) {
    return op(g, "Constant", std::move(name), {}, {OnnxAttribute::of_ints("value_ints", std::move(values))});
}

std::string float_constant(GraphBuilder& g, std::string name, float value) {
    g.add_initializer({name, {}, {value}, false});
    return name;
}

std::string normal_weight(GraphBuilder& g, std::string name, std::vector<std::int64_t> dims) {
    const std::int64_t count = std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
    std::vector<float> values(static_cast<std::size_t>(count));
    WeightGenerator gen = g.generator_for(name);
    fill_normalish(gen, values, kInitializerRange);
    g.add_initializer({name, std::move(dims), std::move(values), true});
    return name;
}

// Values shared by every layer.
struct Shared {
    std::string one, half, sqrt2, masked_score, sqrt_head_dim;
    std::string split_heads;  // Reshape target [0, 0, heads, head_dim]: 0 copies batch and sequence
    std::string merge_heads;  // Reshape target [0, 0, hidden]
    std::string mask;         // [batch, 1, 1, seq]: 0 where attended, -10000 where masked
};

// x W + b. BERT starts biases at 0; random ones (std 0.02) keep a runtime from dropping the Add as
// a no-op, which would make the benchmark measure less than a trained model runs.
std::string linear(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t in, std::int64_t out) {
    const std::string weight = normal_weight(g, name + ".weight", {in, out});
    const std::string bias = normal_weight(g, name + ".bias", {out});
    return op(g, "Add", name, {op(g, "MatMul", name + ".MatMul", {x, weight}), bias});
}

// Over the last axis; gamma 1, beta 0 as BERT initialises them.
std::string layer_norm(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t hidden) {
    const std::string gamma = name + ".weight";
    const std::string beta = name + ".bias";
    g.add_initializer({gamma, {hidden}, std::vector<float>(static_cast<std::size_t>(hidden), 1.0F), true});
    g.add_initializer({beta, {hidden}, std::vector<float>(static_cast<std::size_t>(hidden), 0.0F), true});
    return op(g, "LayerNormalization", name, {x, gamma, beta},
              {OnnxAttribute::of_int("axis", -1), OnnxAttribute::of_float("epsilon", kLayerNormEpsilon)});
}

// x * 0.5 * (1 + erf(x / sqrt(2))): the ONNX Gelu op is opset 20. The node order is torch.onnx's,
// which ONNX Runtime fuses back into one Gelu.
std::string gelu(GraphBuilder& g, const std::string& name, const std::string& x, const Shared& s) {
    const std::string erf = op(g, "Erf", name + ".Erf", {op(g, "Div", name + ".Div", {x, s.sqrt2})});
    const std::string scaled = op(g, "Mul", name + ".Mul", {x, op(g, "Add", name + ".Add", {erf, s.one})});
    return op(g, "Mul", name, {scaled, s.half});
}

std::string embeddings(GraphBuilder& g, const BertConfig& c) {
    const std::string p = "bert.embeddings";
    const auto table = [&](std::string_view part, std::int64_t rows, const std::string& ids) {
        const std::string name = fmt::format("{}.{}", p, part);
        return op(g, "Gather", name, {normal_weight(g, name + ".weight", {rows, c.hidden}), ids});
    };
    std::vector<std::int64_t> positions(static_cast<std::size_t>(c.sequence_length));
    std::iota(positions.begin(), positions.end(), std::int64_t{0});
    const std::string words = table("word_embeddings", c.vocab, "input_ids");
    const std::string types = table("token_type_embeddings", c.type_vocab, "token_type_ids");
    // [seq, hidden], broadcast over the batch.
    const std::string position_rows =
        table("position_embeddings", c.max_positions, int64_constant(g, p + ".position_ids", std::move(positions)));
    const std::string sum =
        op(g, "Add", p + ".add_position", {op(g, "Add", p + ".add_token_type", {words, types}), position_rows});
    return layer_norm(g, p + ".LayerNorm", sum, c.hidden);
}

// (1 - mask) * -10000 as [batch, 1, 1, seq], added to every head's [batch, heads, seq, seq] scores.
std::string extended_attention_mask(GraphBuilder& g, const Shared& s) {
    const std::string p = "bert.extended_attention_mask";
    const std::string mask =
        op(g, "Unsqueeze", p + ".Unsqueeze", {"attention_mask", int64_constant(g, p + ".axes", {1, 2})});
    const std::string as_float = op(g, "Cast", p + ".Cast", {mask}, {OnnxAttribute::of_int("to", kOnnxFloat)});
    return op(g, "Mul", p, {op(g, "Sub", p + ".Sub", {s.one, as_float}), s.masked_score});
}

std::string self_attention(GraphBuilder& g, const BertConfig& c, const std::string& p, const std::string& x,
                           const Shared& s) {
    // Q and V to [batch, heads, seq, head_dim]; K straight to [batch, heads, head_dim, seq].
    const auto heads = [&](std::string_view part, std::vector<std::int64_t> perm) {
        const std::string name = fmt::format("{}.attention.self.{}", p, part);
        const std::string y =
            op(g, "Reshape", name + ".Reshape", {linear(g, name, x, c.hidden, c.hidden), s.split_heads});
        return op(g, "Transpose", name + ".Transpose", {y}, {OnnxAttribute::of_ints("perm", std::move(perm))});
    };
    const std::string q = heads("query", {0, 2, 1, 3});
    const std::string k = heads("key", {0, 2, 3, 1});
    const std::string v = heads("value", {0, 2, 1, 3});

    const std::string a = p + ".attention.self";
    std::string scores = op(g, "Div", a + ".scale", {op(g, "MatMul", a + ".scores", {q, k}), s.sqrt_head_dim});
    scores = op(g, "Add", a + ".mask", {scores, s.mask});
    const std::string probs = op(g, "Softmax", a + ".Softmax", {scores}, {OnnxAttribute::of_int("axis", -1)});
    std::string context = op(g, "MatMul", a + ".context", {probs, v});
    context = op(g, "Transpose", a + ".context.Transpose", {context}, {OnnxAttribute::of_ints("perm", {0, 2, 1, 3})});
    context = op(g, "Reshape", a + ".context.Reshape", {context, s.merge_heads});

    const std::string o = p + ".attention.output";
    const std::string residual =
        op(g, "Add", o + ".residual", {linear(g, o + ".dense", context, c.hidden, c.hidden), x});
    return layer_norm(g, o + ".LayerNorm", residual, c.hidden);
}

std::string feed_forward(GraphBuilder& g, const BertConfig& c, const std::string& p, const std::string& x,
                         const Shared& s) {
    const std::string i = p + ".intermediate";
    const std::string h = gelu(g, i + ".gelu", linear(g, i + ".dense", x, c.hidden, c.intermediate), s);
    const std::string o = p + ".output";
    const std::string residual =
        op(g, "Add", o + ".residual", {linear(g, o + ".dense", h, c.intermediate, c.hidden), x});
    return layer_norm(g, o + ".LayerNorm", residual, c.hidden);
}

// qa_outputs on every token, [batch, seq, 2], split into start_logits and end_logits [batch, seq].
void span_head(GraphBuilder& g, const BertConfig& c, const std::string& x) {
    const std::string logits = linear(g, "qa_outputs", x, c.hidden, 2);
    g.add_node({"Split",
                "qa_outputs.Split",
                {logits},
                {"qa_outputs.start", "qa_outputs.end"},
                {OnnxAttribute::of_int("axis", -1)}});
    const std::string last_axis = int64_constant(g, "qa_outputs.squeeze_axes", {-1});
    op(g, "Squeeze", "start_logits", {"qa_outputs.start", last_axis});
    op(g, "Squeeze", "end_logits", {"qa_outputs.end", last_axis});
}

void check(const BertConfig& c) {
    if (c.layers <= 0 || c.hidden <= 0 || c.heads <= 0 || c.hidden % c.heads != 0) {
        throw std::logic_error(fmt::format("bert: {} heads do not split a width of {}", c.heads, c.hidden));
    }
    if (c.sequence_length <= 0 || c.sequence_length > c.max_positions) {
        throw std::logic_error(fmt::format("bert: sequence length {} outside the position table's {} rows",
                                           c.sequence_length, c.max_positions));
    }
}

}  // namespace

GraphBuilder build_bert(const BertConfig& c, std::uint64_t seed) {
    check(c);
    GraphBuilder g("bert", seed);
    g.set_opset_version(kOpsetWithLayerNorm);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    const auto seq = OnnxDim::fixed(c.sequence_length);
    for (const char* input : {"input_ids", "attention_mask", "token_type_ids"}) {
        g.add_input(input, OnnxElemType::int64, {batch, seq});
    }

    const std::int64_t head_dim = c.hidden / c.heads;
    Shared s;
    s.one = float_constant(g, "const.one", 1.0F);
    s.half = float_constant(g, "const.half", 0.5F);
    s.sqrt2 = float_constant(g, "const.sqrt2", static_cast<float>(std::sqrt(2.0)));
    s.masked_score = float_constant(g, "const.masked_score", kMaskedScore);
    s.sqrt_head_dim =
        float_constant(g, "const.sqrt_head_dim", static_cast<float>(std::sqrt(static_cast<double>(head_dim))));
    s.split_heads = int64_constant(g, "shape.split_heads", {0, 0, c.heads, head_dim});
    s.merge_heads = int64_constant(g, "shape.merge_heads", {0, 0, c.hidden});
    s.mask = extended_attention_mask(g, s);

    std::string x = embeddings(g, c);
    for (std::int64_t layer = 0; layer < c.layers; ++layer) {
        const std::string p = fmt::format("bert.encoder.layer.{}", layer);
        x = feed_forward(g, c, p, self_attention(g, c, p, x, s), s);
    }
    span_head(g, c, x);
    g.add_output("start_logits", OnnxElemType::float32, {batch, seq});
    g.add_output("end_logits", OnnxElemType::float32, {batch, seq});
    return g;
}

GraphBuilder build_bert_large(std::uint64_t seed) { return build_bert(kBertLarge, seed); }

GraphBuilder build_bert_base(std::uint64_t seed) { return build_bert(kBertBase, seed); }

std::int64_t bert_parameter_count(const BertConfig& c) {
    const std::int64_t h = c.hidden;
    const std::int64_t layer_norm = 2 * h;
    const std::int64_t embeddings = (c.vocab + c.max_positions + c.type_vocab) * h + layer_norm;
    const std::int64_t attention = 4 * (h * h + h) + layer_norm;  // Q, K, V, output dense
    const std::int64_t feed_forward = (h * c.intermediate + c.intermediate) + (c.intermediate * h + h) + layer_norm;
    const std::int64_t span_head = h * 2 + 2;
    return embeddings + c.layers * (attention + feed_forward) + span_head;
}

}  // namespace inferbench::models
