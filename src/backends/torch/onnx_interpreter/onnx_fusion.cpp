// The pattern matcher behind fuse_graph(): each rewrite walks from a distinctive node (Erf, Tanh,
// ReduceMean, Pow, Softmax, MatMul) along the exporters' orderings and checks that every value it
// swallows is read by the pattern alone.
#include "backends/torch/onnx_interpreter/onnx_fusion.hpp"

#include <cmath>
#include <numbers>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/torch/onnx_interpreter/onnx_fusion_matcher.hpp"

namespace inferbench::torch_onnx {

namespace fusion {

namespace {

// --- GELU ---

// The Muls that turn p = 1 + erf(...) (or tanh) into x * p * 0.5, in the orders exporters write:
// (x * p) * 0.5, (p * 0.5) * x, and (x * 0.5) * p.
std::optional<Nodes> gelu_tail(const Matcher& m, const std::string& x, const OnnxNode& add_one) {
    const std::string& p = add_one.outputs[0];
    const OnnxNode* m1 = m.sole_consumer(p, "Mul");
    if (m1 == nullptr) return std::nullopt;
    const std::string other = other_input(*m1, p);
    if (other == x || m.is_scalar(other, 0.5)) {
        const OnnxNode* m2 = m.sole_consumer(m1->outputs[0], "Mul");
        if (m2 == nullptr) return std::nullopt;
        const std::string last = other_input(*m2, m1->outputs[0]);
        const bool ok = other == x ? m.is_scalar(last, 0.5) : last == x;
        return ok ? std::optional<Nodes>(Nodes{m1, m2}) : std::nullopt;
    }
    const OnnxNode* half = m.producer(other, "Mul");
    if (half == nullptr || !m.read_only_by(other, {m1})) return std::nullopt;
    const std::string half_x = other_input(*half, x);
    if (half_x.empty() || half_x == x || !m.is_scalar(half_x, 0.5)) return std::nullopt;
    return Nodes{half, m1};
}

// The Add of 1 that reads `value` (either order), when the pattern alone reads `value`.
const OnnxNode* add_one_after(const Matcher& m, const std::string& value) {
    const OnnxNode* add = m.sole_consumer(value, "Add");
    return add != nullptr && m.is_scalar(other_input(*add, value), 1.0) ? add : nullptr;
}

bool finish_gelu(Matcher& m, Nodes pattern, const std::string& x, const OnnxNode* add_one, std::string approximate) {
    if (add_one == nullptr) return false;
    const auto tail = gelu_tail(m, x, *add_one);
    if (!tail) return false;
    pattern.push_back(add_one);
    pattern.insert(pattern.end(), tail->begin(), tail->end());
    OnnxNode gelu = fused_node(*tail->back(), "Gelu", "", {x});
    gelu.attributes.emplace("approximate", std::move(approximate));
    m.replace(pattern, std::move(gelu));
    return true;
}

}  // namespace

// x * 0.5 * (1 + erf(x / sqrt(2))), the division also written as a product with 1 / sqrt(2).
bool fuse_erf_gelu(Matcher& m, const OnnxNode& erf) {
    const std::string& scaled = erf.inputs[0];
    const OnnxNode* scale = m.producer(scaled, "Div");
    std::string x;
    if (scale != nullptr && scale->inputs.size() == 2 && m.is_scalar(scale->inputs[1], std::numbers::sqrt2)) {
        x = scale->inputs[0];
    } else if ((scale = m.producer(scaled, "Mul")) != nullptr) {
        for (const std::string& in : scale->inputs) {
            if (m.is_scalar(in, 1.0 / std::numbers::sqrt2)) x = other_input(*scale, in);
        }
    }
    if (x.empty() || !m.read_only_by(scaled, {&erf})) return false;
    return finish_gelu(m, {scale, &erf}, x, add_one_after(m, erf.outputs[0]), "none");
}

namespace {

// x^3 as Pow(x, 3), x * (x * x) or (x * x) * x; empty when `value` is none of them.
std::optional<Nodes> cube_of(const Matcher& m, const std::string& value, const std::string& x) {
    if (const OnnxNode* pow = m.producer(value, "Pow")) {
        if (pow->inputs[0] == x && m.is_scalar(pow->inputs[1], 3.0)) return Nodes{pow};
        return std::nullopt;
    }
    const OnnxNode* outer = m.producer(value, "Mul");
    if (outer == nullptr) return std::nullopt;
    const std::string square = other_input(*outer, x);
    const OnnxNode* inner = square.empty() ? nullptr : m.producer(square, "Mul");
    if (inner == nullptr || inner->inputs[0] != x || inner->inputs[1] != x || !m.read_only_by(square, {outer}))
        return std::nullopt;
    return Nodes{inner, outer};
}

}  // namespace

// 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))).
bool fuse_tanh_gelu(Matcher& m, const OnnxNode& tanh) {
    const std::string& scaled = tanh.inputs[0];
    const OnnxNode* scale = m.producer(scaled, "Mul");
    if (scale == nullptr || !m.read_only_by(scaled, {&tanh})) return false;
    std::string inner;
    for (const std::string& in : scale->inputs) {
        if (m.is_scalar(in, std::sqrt(2.0 / std::numbers::pi))) inner = other_input(*scale, in);
    }
    const OnnxNode* sum = inner.empty() ? nullptr : m.producer(inner, "Add");
    if (sum == nullptr || !m.read_only_by(inner, {scale})) return false;
    for (const std::string& x : sum->inputs) {
        const std::string term = other_input(*sum, x);
        const OnnxNode* coefficient = m.producer(term, "Mul");
        if (coefficient == nullptr || !m.read_only_by(term, {sum})) continue;
        for (const std::string& c : coefficient->inputs) {
            if (!m.is_scalar(c, 0.044715)) continue;
            const std::string cubed = other_input(*coefficient, c);
            const auto cube = cube_of(m, cubed, x);
            if (!cube || !m.read_only_by(cubed, {coefficient})) continue;
            Nodes pattern = *cube;
            pattern.insert(pattern.end(), {coefficient, sum, scale, &tanh});
            return finish_gelu(m, pattern, x, add_one_after(m, tanh.outputs[0]), "tanh");
        }
    }
    return false;
}

}  // namespace fusion

namespace {

FusedGraph fuse_nodes(const onnx::OnnxGraph& graph, std::int64_t opset, const KnownValues* known) {
    fusion::Matcher m(graph, opset, known);
    FusionCounts counts;
    // LayerNorm before RMSNorm: a LayerNorm's tail (Pow, ReduceMean, Add, Sqrt, Div, Mul) is an RMSNorm of x - mean.
    for (const auto& node : graph.nodes) {
        if (m.taken(node) || !node.domain.empty()) continue;
        if (node.op_type == "ReduceMean") counts.layer_norm += fusion::fuse_layer_norm(m, node) ? 1 : 0;
        if (node.op_type == "Softmax") counts.attention += fusion::fuse_attention(m, node) ? 1 : 0;
    }
    for (const auto& node : graph.nodes) {
        if (m.taken(node) || !node.domain.empty()) continue;
        if (node.op_type == "Pow" || node.op_type == "Mul") counts.rms_norm += fusion::fuse_rms_norm(m, node) ? 1 : 0;
        if (node.op_type == "Erf") counts.gelu += fusion::fuse_erf_gelu(m, node) ? 1 : 0;
        if (node.op_type == "Tanh") counts.gelu += fusion::fuse_tanh_gelu(m, node) ? 1 : 0;
    }
    for (const auto& node : graph.nodes) {
        if (!m.taken(node) && node.domain.empty() && node.op_type == "MatMul")
            counts.linear += fusion::fuse_linear(m, node) ? 1 : 0;
    }
    for (const auto& node : graph.nodes) {
        if (!m.taken(node) && node.domain.empty() && node.op_type == "Reshape") fusion::fuse_view_chain(m, node);
    }
    if (known != nullptr) {
        for (const auto& node : graph.nodes) {
            if (!m.taken(node)) fusion::fold_attention_scales(m, node);
        }
    }
    return FusedGraph{m.result(), counts};
}

}  // namespace

FusedGraph fuse_graph(const onnx::OnnxModel& model) { return fuse_nodes(model.graph, model.opset_version(), nullptr); }

FusedGraph fuse_specialized(const std::vector<onnx::OnnxNode>& nodes, const std::vector<onnx::OnnxValueInfo>& outputs,
                            std::int64_t opset, const KnownValues& known) {
    onnx::OnnxGraph graph;
    graph.nodes = nodes;
    graph.outputs = outputs;
    return fuse_nodes(graph, opset, &known);
}

FusionCounts& FusionCounts::operator+=(const FusionCounts& more) {
    gelu += more.gelu;
    layer_norm += more.layer_norm;
    rms_norm += more.rms_norm;
    attention += more.attention;
    linear += more.linear;
    return *this;
}

std::string FusionCounts::summary() const {
    std::vector<std::string> parts;
    const auto add = [&parts](int n, std::string_view what) {
        if (n > 0) parts.push_back(fmt::format("{} {}", n, what));
    };
    add(gelu, "GELU");
    add(layer_norm, "LayerNorm");
    add(rms_norm, "RMSNorm");
    add(attention, "attention");
    add(linear, "Linear");
    return parts.empty() ? "no fusions" : fmt::format("fused {}", fmt::join(parts, ", "));
}

}  // namespace inferbench::torch_onnx
