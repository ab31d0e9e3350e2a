// The normalization, attention and Linear rewrites of fuse_graph().
#include <algorithm>
#include <optional>

#include "backends/torch/onnx_interpreter/onnx_fusion_matcher.hpp"

namespace inferbench::torch_onnx::fusion {

namespace {

// How many trailing axes (-k .. -1) a ReduceMean averages over, when it is exactly those, kept.
// Positive axes would need the input's rank, which the graph alone does not give.
std::optional<std::int64_t> trailing_axes(const Matcher& m, const OnnxNode& reduce) {
    if (attribute<std::int64_t>(reduce, "keepdims", 1) != 1) return std::nullopt;
    std::optional<std::vector<std::int64_t>> axes;
    if (reduce.inputs.size() >= 2 && !reduce.inputs[1].empty()) {
        axes = m.ints(reduce.inputs[1]);
    } else {
        axes = attribute<std::vector<std::int64_t>>(reduce, "axes", {});
    }
    if (!axes || axes->empty()) return std::nullopt;
    std::ranges::sort(*axes);
    const auto k = static_cast<std::int64_t>(axes->size());
    for (std::int64_t i = 0; i < k; ++i) {
        if ((*axes)[static_cast<std::size_t>(i)] != i - k) return std::nullopt;
    }
    return k;
}

// The base of x^2 written as Pow(x, 2) or Mul(x, x); empty otherwise.
std::string squared(const Matcher& m, const OnnxNode& node) {
    if (node.inputs.size() != 2 || m.taken(node)) return {};
    if (node.op_type == "Pow" && m.is_scalar(node.inputs[1], 2.0)) return node.inputs[0];
    if (node.op_type == "Mul" && node.inputs[0] == node.inputs[1]) return node.inputs[0];
    return {};
}

// base / sqrt(mean(square) + eps), from the square on: the division also written as base * (1 / sqrt)
// and base * Reciprocal(sqrt).
struct Normalized {
    Nodes nodes;
    std::int64_t axes = 0;
    double epsilon = 0.0;
    const OnnxNode* last = nullptr;  // the node computing the normalized value; it reads `base`
};

std::optional<Normalized> divide_by_rms(const Matcher& m, const OnnxNode& square, const std::string& base) {
    const OnnxNode* mean = m.sole_consumer(square.outputs[0], "ReduceMean");
    const auto axes = mean != nullptr ? trailing_axes(m, *mean) : std::nullopt;
    const OnnxNode* add = axes ? m.sole_consumer(mean->outputs[0], "Add") : nullptr;
    const auto epsilon = add != nullptr ? m.scalar(other_input(*add, mean->outputs[0])) : std::nullopt;
    const OnnxNode* root = epsilon ? m.sole_consumer(add->outputs[0], "Sqrt") : nullptr;
    if (root == nullptr) return std::nullopt;
    Normalized n{{&square, mean, add, root}, *axes, *epsilon, nullptr};
    const std::string& r = root->outputs[0];
    const OnnxNode* div = m.sole_consumer(r, "Div");
    if (div != nullptr && div->inputs[0] == base && div->inputs[1] == r) {
        n.nodes.push_back(div);
        n.last = div;
        return n;
    }
    const OnnxNode* inverse = m.sole_consumer(r, "Reciprocal");
    if (inverse == nullptr && div != nullptr && div->inputs[1] == r && m.is_scalar(div->inputs[0], 1.0)) inverse = div;
    const OnnxNode* mul = inverse != nullptr ? m.sole_consumer(inverse->outputs[0], "Mul") : nullptr;
    if (mul == nullptr || other_input(*mul, inverse->outputs[0]) != base) return std::nullopt;
    n.nodes.insert(n.nodes.end(), {inverse, mul});
    n.last = mul;
    return n;
}

// A constant affine parameter of a LayerNorm over k axes: LayerNormalization wants it of exactly the
// normalized shape, so a size-1 axis (which the Mul would broadcast) is left alone.
bool affine_parameter(const Matcher& m, const std::string& value, std::int64_t axes) {
    const onnx::OnnxTensor* t = m.constant(value);
    return t != nullptr && static_cast<std::int64_t>(t->dims.size()) == axes &&
           std::ranges::all_of(t->dims, [](std::int64_t d) { return d > 1; });
}

// The Mul by a constant after `last` (weight), if there is one.
const OnnxNode* weight_after(const Matcher& m, const OnnxNode& last, std::string& weight) {
    const OnnxNode* mul = m.sole_consumer(last.outputs[0], "Mul");
    weight = mul != nullptr ? other_input(*mul, last.outputs[0]) : std::string();
    return weight.empty() || m.constant(weight) == nullptr ? nullptr : mul;
}

OnnxNode with_norm_attributes(OnnxNode node, const Normalized& n) {
    node.attributes.emplace("axis", -n.axes);
    node.attributes.emplace("epsilon", static_cast<float>(n.epsilon));
    return node;
}

// Q K^T, optionally scaled by a constant (Div or Mul), read by `reader` alone.
struct ScaledProduct {
    Nodes nodes;
    const OnnxNode* matmul = nullptr;
    double scale = 1.0;
};

std::optional<ScaledProduct> scaled_product(const Matcher& m, const std::string& value, const OnnxNode& reader) {
    if (!m.read_only_by(value, {&reader})) return std::nullopt;
    ScaledProduct p;
    std::string product = value;
    if (const OnnxNode* div = m.producer(value, "Div")) {
        const auto c = div->inputs.size() == 2 ? m.scalar(div->inputs[1]) : std::nullopt;
        if (!c || *c == 0.0) return std::nullopt;
        p = {{div}, nullptr, 1.0 / *c};
        product = div->inputs[0];
    } else if (const OnnxNode* mul = m.producer(value, "Mul")) {
        product.clear();
        for (const std::string& in : mul->inputs) {
            if (const auto c = m.scalar(in)) {
                p = {{mul}, nullptr, *c};
                product = other_input(*mul, in);
            }
        }
    }
    if (product.empty() || (!p.nodes.empty() && !m.read_only_by(product, {p.nodes.back()}))) return std::nullopt;
    p.matmul = m.producer(product, "MatMul");
    if (p.matmul == nullptr || p.matmul->inputs.size() != 2) return std::nullopt;
    p.nodes.push_back(p.matmul);
    return p;
}

// A product's operand that is a value times (or over) a constant scalar, read by the product alone:
// the scalar joins the attention's scale (nn.MultiheadAttention scales Q; PyTorch's SDPA export scales
// both Q and K^T by sqrt(scale)).
std::string unscaled_operand(const Matcher& m, const std::string& operand, const OnnxNode& matmul, Nodes& pattern,
                             double& scale) {
    const OnnxNode* div = m.producer(operand, "Div");
    const OnnxNode* mul = div == nullptr ? m.producer(operand, "Mul") : nullptr;
    if ((div == nullptr && mul == nullptr) || !m.read_only_by(operand, {&matmul})) return operand;
    if (div != nullptr) {
        const auto c = m.scalar(div->inputs[1]);
        if (!c || *c == 0.0) return operand;
        pattern.push_back(div);
        scale /= *c;
        return div->inputs[0];
    }
    for (const std::string& in : mul->inputs) {
        const auto c = m.scalar(in);
        const std::string value = other_input(*mul, in);
        if (c && !value.empty() && value != in) {
            pattern.push_back(mul);
            scale *= *c;
            return value;
        }
    }
    return operand;
}

// Where(IsNaN(p), 0, p): PyTorch's SDPA export (a boolean mask) zeroes the probabilities of a row
// whose scores are all masked, as its "safe softmax" does. The guard's Where, or nullptr.
const OnnxNode* nan_guard(const Matcher& m, const std::string& probs, Nodes& pattern) {
    const Nodes readers = m.consumers(probs);
    if (readers.size() != 2) return nullptr;
    const OnnxNode* is_nan = nullptr;
    for (const OnnxNode* reader : readers) {
        if (reader->op_type == "IsNaN" && reader->domain.empty() && !m.taken(*reader)) is_nan = reader;
    }
    const OnnxNode* where = is_nan != nullptr ? m.sole_consumer(is_nan->outputs[0], "Where") : nullptr;
    if (where == nullptr || where->inputs.size() != 3 || where->inputs[0] != is_nan->outputs[0] ||
        where->inputs[2] != probs || !m.is_scalar(where->inputs[1], 0.0) || !m.read_only_by(probs, {is_nan, where})) {
        return nullptr;
    }
    pattern.insert(pattern.end(), {is_nan, where});
    return where;
}

// Softmax's probabilities, through an inference-time Dropout and a NaN guard if there are, into
// MatMul(P, V); `guarded` says whether there was a guard.
const OnnxNode* probabilities_times_v(const Matcher& m, const OnnxNode& softmax, Nodes& pattern, bool& guarded) {
    std::string probs = softmax.outputs[0];
    if (const OnnxNode* dropout = m.sole_consumer(probs, "Dropout")) {
        if (dropout->outputs.size() > 1 && !m.unused(dropout->outputs[1])) return nullptr;
        pattern.push_back(dropout);
        probs = dropout->outputs[0];
    }
    const OnnxNode* guard = nan_guard(m, probs, pattern);
    guarded = guard != nullptr;
    if (guarded) probs = guard->outputs[0];
    const OnnxNode* matmul = m.sole_consumer(probs, "MatMul");
    return matmul != nullptr && matmul->inputs[0] == probs && matmul->inputs[1] != probs ? matmul : nullptr;
}

}  // namespace

// (x - mean) / sqrt(mean((x - mean)^2) + eps) * gamma [+ beta], as PyTorch exports F.layer_norm below opset 17.
bool fuse_layer_norm(Matcher& m, const OnnxNode& reduce_mean) {
    const std::string& x = reduce_mean.inputs[0];
    const auto axes = trailing_axes(m, reduce_mean);
    const OnnxNode* sub = axes ? m.sole_consumer(reduce_mean.outputs[0], "Sub") : nullptr;
    if (sub == nullptr || sub->inputs[0] != x || sub->inputs[1] != reduce_mean.outputs[0]) return false;
    const std::string& centered = sub->outputs[0];
    for (const OnnxNode* square : m.consumers(centered)) {
        if (squared(m, *square) != centered) continue;
        const auto n = divide_by_rms(m, *square, centered);
        if (!n || n->axes != *axes || !m.read_only_by(centered, {square, n->last})) return false;
        std::string gamma;
        const OnnxNode* scale = weight_after(m, *n->last, gamma);
        if (scale == nullptr || !affine_parameter(m, gamma, *axes)) return false;
        Nodes pattern{&reduce_mean, sub};
        pattern.insert(pattern.end(), n->nodes.begin(), n->nodes.end());
        pattern.push_back(scale);
        std::vector<std::string> inputs{x, gamma};
        const OnnxNode* shift = m.sole_consumer(scale->outputs[0], "Add");
        const std::string beta = shift != nullptr ? other_input(*shift, scale->outputs[0]) : std::string();
        if (!beta.empty() && affine_parameter(m, beta, *axes)) {
            pattern.push_back(shift);
            inputs.push_back(beta);
        }
        m.replace(pattern, with_norm_attributes(fused_node(*pattern.back(), "LayerNormalization", "", inputs), *n));
        return true;
    }
    return false;
}

// x / sqrt(mean(x^2) + eps) [* weight] (T5, LLaMA and their kin), with the division in any of its spellings.
bool fuse_rms_norm(Matcher& m, const OnnxNode& square) {
    const std::string x = squared(m, square);
    if (x.empty()) return false;
    const auto n = divide_by_rms(m, square, x);
    if (!n) return false;
    Nodes pattern = n->nodes;
    std::vector<std::string> inputs{x};
    std::string weight;
    if (const OnnxNode* scale = weight_after(m, *n->last, weight)) {
        pattern.push_back(scale);
        inputs.push_back(weight);
    }
    m.replace(pattern, with_norm_attributes(
                           fused_node(*pattern.back(), "RMSNormalization", std::string(kFusedDomain), inputs), *n));
    return true;
}

// Softmax(Q K^T * scale [+ mask], last axis) V. K arrives transposed, as the MatMul reads it.
bool fuse_attention(Matcher& m, const OnnxNode& softmax) {
    const auto axis = attribute<std::int64_t>(softmax, "axis", m.opset() < 13 ? 1 : -1);
    if (axis != -1) return false;
    const std::string& scores = softmax.inputs[0];
    auto product = scaled_product(m, scores, softmax);
    std::string mask;
    const OnnxNode* add = product ? nullptr : m.producer(scores, "Add");
    if (add != nullptr && add->inputs.size() == 2 && add->inputs[0] != add->inputs[1] &&
        m.read_only_by(scores, {&softmax})) {
        for (const std::string& in : add->inputs) {
            if (product) break;
            product = scaled_product(m, in, *add);
            if (product) mask = other_input(*add, in);
        }
    }
    if (!product) return false;
    Nodes pattern = product->nodes;
    if (!mask.empty()) pattern.push_back(add);
    pattern.push_back(&softmax);
    bool guarded = false;
    const OnnxNode* times_v = probabilities_times_v(m, softmax, pattern, guarded);
    if (times_v == nullptr) return false;
    pattern.push_back(times_v);
    double scale = product->scale;
    const OnnxNode& qk = *product->matmul;
    const std::string q = qk.inputs[0] == qk.inputs[1] ? qk.inputs[0] : unscaled_operand(m, qk.inputs[0], qk, pattern, scale);
    const std::string kt = qk.inputs[0] == qk.inputs[1] ? qk.inputs[1] : unscaled_operand(m, qk.inputs[1], qk, pattern, scale);
    std::vector<std::string> inputs{q, kt, times_v->inputs[1]};
    if (!mask.empty()) inputs.push_back(mask);
    OnnxNode fused = fused_node(*times_v, "Attention", std::string(kFusedDomain), inputs);
    fused.attributes.emplace("scale", static_cast<float>(scale));
    if (guarded) fused.attributes.emplace("zero_nan_rows", std::int64_t{1});
    m.replace(pattern, std::move(fused));
    return true;
}

// A fused Attention whose Q or K^T is a Mul (or Div) by a scalar that has become known: the scalar
// joins its scale.
bool fold_attention_scales(Matcher& m, const OnnxNode& attention) {
    if (attention.domain != kFusedDomain || attention.op_type != "Attention" || attention.inputs.size() < 3) return false;
    const auto scale_attribute = attribute<float>(attention, "scale", 1.0F);
    if (!scale_attribute) return false;
    double scale = *scale_attribute;
    Nodes pattern;
    const std::string q = unscaled_operand(m, attention.inputs[0], attention, pattern, scale);
    const std::string kt = unscaled_operand(m, attention.inputs[1], attention, pattern, scale);
    if (pattern.empty()) return false;
    OnnxNode folded = attention;
    folded.inputs[0] = q;
    folded.inputs[1] = kt;
    folded.attributes.insert_or_assign("scale", static_cast<float>(scale));
    pattern.push_back(&attention);
    m.replace(pattern, std::move(folded));
    return true;
}

// MatMul(x, W) + b with a constant 2-D W and a constant b of W's output width: one GEMM with the bias
// in its epilogue, which the MatMul-then-Add pair of nn.Linear exports (rank > 2) costs a pass more.
bool fuse_linear(Matcher& m, const OnnxNode& matmul) {
    const onnx::OnnxTensor* w = matmul.inputs.size() == 2 ? m.constant(matmul.inputs[1]) : nullptr;
    const auto type = w != nullptr ? scalar_type_of(w->data_type) : std::nullopt;
    if (!type || !torch::isFloatingType(*type) || w->dims.size() != 2) return false;
    const OnnxNode* add = m.sole_consumer(matmul.outputs[0], "Add");
    const std::string bias = add != nullptr ? other_input(*add, matmul.outputs[0]) : std::string();
    const onnx::OnnxTensor* b = bias.empty() ? nullptr : m.constant(bias);
    if (b == nullptr || b->dims != std::vector<std::int64_t>{w->dims[1]} || b->data_type != w->data_type) return false;
    m.replace({&matmul, add},
              fused_node(*add, "Linear", std::string(kFusedDomain), {matmul.inputs[0], matmul.inputs[1], bias}));
    return true;
}

// Reshape -> Transpose -> Reshape with the intermediate values read by the chain alone (exporters'
// attention head split and merge): one ViewChain, a view where the first Reshape alone would copy.
bool fuse_view_chain(Matcher& m, const OnnxNode& reshape) {
    // allowzero (which the dynamo exporter writes on most reshapes) travels with the chain.
    const auto plain = [&m](const OnnxNode& r) { return r.inputs.size() == 2 && m.opset() >= 5; };
    if (!plain(reshape)) return false;
    const OnnxNode* transpose = m.sole_consumer(reshape.outputs[0], "Transpose");
    const auto perm = transpose != nullptr ? attribute<std::vector<std::int64_t>>(*transpose, "perm", {}) : std::nullopt;
    if (!perm || perm->empty()) return false;
    const OnnxNode* second = m.sole_consumer(transpose->outputs[0], "Reshape");
    if (second == nullptr || !plain(*second) || second->inputs[0] != transpose->outputs[0]) return false;
    OnnxNode chain = fused_node(*second, "ViewChain", std::string(kFusedDomain),
                                {reshape.inputs[0], reshape.inputs[1], second->inputs[1]});
    chain.attributes.emplace("perm", *perm);
    chain.attributes.insert_or_assign("allowzero_first", attribute<std::int64_t>(reshape, "allowzero", 0).value_or(0));
    chain.attributes.insert_or_assign("allowzero_second", attribute<std::int64_t>(*second, "allowzero", 0).value_or(0));
    m.replace({&reshape, transpose, second}, std::move(chain));
    return true;
}

}  // namespace inferbench::torch_onnx::fusion
