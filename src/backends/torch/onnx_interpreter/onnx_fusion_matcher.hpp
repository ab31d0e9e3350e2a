// Internal to the graph rewrites (onnx_fusion*.cpp): a read-only view of the graph that answers who
// produces and who reads each value, and collects the replacements.
#pragma once

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_fusion.hpp"

namespace inferbench::torch_onnx::fusion {

using onnx::OnnxNode;
using Nodes = std::vector<const OnnxNode*>;

class Matcher {
public:
    Matcher(const onnx::OnnxGraph& graph, std::int64_t opset, const KnownValues* known = nullptr)
        : graph_(graph), opset_(opset), taken_(graph.nodes.size(), false), known_(known) {
        for (const auto& t : graph.initializers) constants_.emplace(t.name, &t);
        for (std::size_t i = 0; i < graph.nodes.size(); ++i) {
            const OnnxNode& node = graph.nodes[i];
            for (const std::string& name : node.outputs) producer_.emplace(name, i);
            for (const std::string& name : node.inputs) consumers_[name].push_back(i);
            const auto value = node.attributes.find("value");
            if (node.op_type == "Constant" && node.domain.empty() && value != node.attributes.end()) {
                if (const auto* t = std::get_if<onnx::OnnxTensor>(&value->second)) constants_.emplace(node.outputs[0], t);
            }
            // PyTorch's exporter shares equal weights through Identity nodes (ConvNeXt's biases, say).
            if (node.op_type == "Identity" && node.domain.empty() && node.inputs.size() == 1 &&
                node.outputs.size() == 1) {
                if (const onnx::OnnxTensor* t = constant(node.inputs[0])) constants_.emplace(node.outputs[0], t);
            }
        }
        for (const auto& output : graph.outputs) graph_outputs_.insert(output.name);
    }

    std::int64_t opset() const { return opset_; }
    bool taken(const OnnxNode& node) const { return taken_[index(node)]; }

    // The node of type `op` that computes `value`, unless a rewrite has taken it.
    const OnnxNode* producer(const std::string& value, std::string_view op) const {
        const auto it = producer_.find(value);
        if (it == producer_.end() || taken_[it->second]) return nullptr;
        const OnnxNode& node = graph_.nodes[it->second];
        return node.op_type == op && node.domain.empty() ? &node : nullptr;
    }

    // The one node that reads `value`, if it is an `op` and nothing else (no graph output) reads it.
    const OnnxNode* sole_consumer(const std::string& value, std::string_view op) const {
        const auto it = consumers_.find(value);
        if (graph_outputs_.contains(value) || it == consumers_.end() || it->second.size() != 1) return nullptr;
        const OnnxNode& node = graph_.nodes[it->second[0]];
        if (taken_[it->second[0]] || node.op_type != op || !node.domain.empty()) return nullptr;
        return &node;
    }

    // The nodes that read `value`, in graph order (a node reading it twice is listed twice).
    Nodes consumers(const std::string& value) const {
        Nodes out;
        if (const auto it = consumers_.find(value); it != consumers_.end()) {
            for (const std::size_t i : it->second) out.push_back(&graph_.nodes[i]);
        }
        return out;
    }

    // True when nothing reads `value` (an optional output such as Dropout's mask).
    bool unused(const std::string& value) const {
        return value.empty() || (!consumers_.contains(value) && !graph_outputs_.contains(value));
    }

    // True when every reader of `value` is one of `readers` (a node reading it twice counts once).
    bool read_only_by(const std::string& value, const Nodes& readers) const {
        if (graph_outputs_.contains(value)) return false;
        const auto it = consumers_.find(value);
        if (it == consumers_.end()) return false;
        return std::ranges::all_of(it->second, [&](std::size_t i) {
            return std::ranges::find(readers, &graph_.nodes[i]) != readers.end();
        });
    }

    const onnx::OnnxTensor* constant(const std::string& value) const {
        const auto it = constants_.find(value);
        return it == constants_.end() ? nullptr : it->second;
    }

    // The value of a one-element floating-point constant, or of such a value known after specialization.
    std::optional<double> scalar(const std::string& value) const {
        torch::Tensor v;
        if (const onnx::OnnxTensor* t = constant(value); t != nullptr && t->element_count() == 1) {
            v = to_torch(*t, "fusion");
        } else if (const auto it = known_ != nullptr ? known_->find(value) : KnownValues::const_iterator{};
                   known_ != nullptr && it != known_->end() && it->second.numel() == 1) {
            v = it->second;
        }
        if (!v.defined() || !v.is_floating_point()) return std::nullopt;
        return v.to(torch::kDouble).item<double>();
    }

    // The values of an integer constant (axes, perms).
    std::optional<std::vector<std::int64_t>> ints(const std::string& value) const {
        const onnx::OnnxTensor* t = constant(value);
        if (t == nullptr) return std::nullopt;
        const torch::Tensor v = to_torch(*t, "fusion");
        if (v.is_floating_point()) return std::nullopt;
        return to_int64s(v);
    }

    bool is_scalar(const std::string& value, double expected) const {
        const auto v = scalar(value);
        return v && std::abs(*v - expected) <= 1e-4 * std::abs(expected);
    }

    // Replaces `pattern` by `fused`, placed where its last node was (every input of the pattern is
    // defined before that node, since the pattern's own nodes read them).
    void replace(const Nodes& pattern, OnnxNode fused) {
        std::size_t last = 0;
        for (const OnnxNode* node : pattern) {
            taken_[index(*node)] = true;
            last = std::max(last, index(*node));
        }
        replacements_.emplace(last, std::move(fused));
    }

    std::vector<OnnxNode> result() const {
        std::vector<OnnxNode> out;
        for (std::size_t i = 0; i < graph_.nodes.size(); ++i) {
            if (const auto it = replacements_.find(i); it != replacements_.end()) {
                out.push_back(it->second);
            } else if (!taken_[i]) {
                out.push_back(graph_.nodes[i]);
            }
        }
        return out;
    }

private:
    std::size_t index(const OnnxNode& node) const { return static_cast<std::size_t>(&node - graph_.nodes.data()); }

    const onnx::OnnxGraph& graph_;
    std::int64_t opset_;
    std::vector<bool> taken_;
    std::unordered_map<std::string, std::size_t> producer_;
    std::unordered_map<std::string, std::vector<std::size_t>> consumers_;
    std::unordered_set<std::string> graph_outputs_;
    std::unordered_map<std::string, const onnx::OnnxTensor*> constants_;
    std::map<std::size_t, OnnxNode> replacements_;
    const KnownValues* known_;
};

// The input of a two-input node that is not `known` (`known` itself for x op x); empty if neither is.
inline std::string other_input(const OnnxNode& node, const std::string& known) {
    if (node.inputs.size() != 2) return {};
    if (node.inputs[0] == known) return node.inputs[1];
    if (node.inputs[1] == known) return node.inputs[0];
    return {};
}

// An attribute of `node` (the fallback when it is absent, nullopt when it has another kind).
template <typename T>
std::optional<T> attribute(const OnnxNode& node, std::string_view name, T fallback) {
    const auto it = node.attributes.find(name);
    if (it == node.attributes.end()) return fallback;
    const T* value = std::get_if<T>(&it->second);
    return value == nullptr ? std::nullopt : std::optional<T>(*value);
}

// A node computing the output of `last` (whose name it takes) from `inputs`.
inline OnnxNode fused_node(const OnnxNode& last, std::string op, std::string domain, std::vector<std::string> inputs) {
    return OnnxNode{last.name, std::move(op), std::move(domain), std::move(inputs), {last.outputs[0]}, {}};
}

// Each rewrite starts from its pattern's distinctive node and returns whether it replaced the pattern.
bool fuse_erf_gelu(Matcher& m, const OnnxNode& erf);
bool fuse_tanh_gelu(Matcher& m, const OnnxNode& tanh);
bool fuse_layer_norm(Matcher& m, const OnnxNode& reduce_mean);
bool fuse_rms_norm(Matcher& m, const OnnxNode& square);
bool fuse_attention(Matcher& m, const OnnxNode& softmax);
bool fuse_linear(Matcher& m, const OnnxNode& matmul);
bool fold_attention_scales(Matcher& m, const OnnxNode& attention);
bool fuse_view_chain(Matcher& m, const OnnxNode& reshape);

}  // namespace inferbench::torch_onnx::fusion
