#include "models/cost_model.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/tensor_size.hpp"

namespace inferbench::models {

using onnx::OnnxNode;

double NodeCost::intensity() const {
    const auto bytes = bytes_read + bytes_written;
    return bytes == 0 ? 0.0 : static_cast<double>(flops) / static_cast<double>(bytes);
}

double CostTotals::intensity() const {
    const auto bytes = bytes_read + bytes_written;
    return bytes == 0 ? 0.0 : static_cast<double>(flops) / static_cast<double>(bytes);
}

namespace {

// Checked arithmetic on the counts (core/tensor_size): a cost beyond 64 bits is an error, never a wrapped figure.
// node_cost() adds the node's name to the message.
[[noreturn]] void count_overflows() {
    throw UserError("its cost overflows a 64-bit count; the shapes in the model are out of range");
}

std::int64_t mul(std::int64_t a, std::int64_t b) {
    const auto product = checked_mul(a, b);
    if (!product) count_overflows();
    return *product;
}

void add_to(std::int64_t& total, std::int64_t value) {
    const auto sum = checked_add(total, value);
    if (!sum) count_overflows();
    total = *sum;
}

struct NodeView {
    const OnnxNode& node;
    const ShapeInference& shapes;
    const ValueShape* in(std::size_t i) const { return i < node.inputs.size() ? shapes.find(node.inputs[i]) : nullptr; }
    const ValueShape* out(std::size_t i) const {
        return i < node.outputs.size() ? shapes.find(node.outputs[i]) : nullptr;
    }
    std::int64_t out_elements() const { return out(0) == nullptr ? 0 : out(0)->elements(); }
    std::int64_t attribute(std::string_view name, std::int64_t fallback) const {
        const auto it = node.attributes.find(name);
        const auto* v = it == node.attributes.end() ? nullptr : std::get_if<std::int64_t>(&it->second);
        return v == nullptr ? fallback : *v;
    }
};

std::int64_t product(const std::vector<std::int64_t>& dims, std::size_t from) {
    std::int64_t n = 1;
    for (std::size_t i = from; i < dims.size(); ++i) n = mul(n, dims[i]);
    return n;
}

std::int64_t conv_macs(const NodeView& v) {
    const auto* w = v.in(1);
    if (w == nullptr || w->dims.size() < 3) return 0;
    if (v.node.op_type == "Conv") return mul(v.out_elements(), product(w->dims, 1));  // Cin/groups * kernel
    const auto* x = v.in(0);  // ConvTranspose: W is [Cin, Cout/groups, k...]
    return x == nullptr ? 0 : mul(x->elements(), product(w->dims, 1));
}

std::int64_t matrix_macs(const NodeView& v) {
    const auto* a = v.in(0);
    if (a == nullptr || a->dims.empty()) return 0;
    std::int64_t k = a->dims.back();
    if (v.node.op_type == "Gemm" && v.attribute("transA", 0) != 0) k = a->dims.front();
    return mul(v.out_elements(), k);
}

std::int64_t macs_of(const NodeView& v) {
    const auto& op = v.node.op_type;
    if (op == "Conv" || op == "ConvTranspose") return conv_macs(v);
    if (op == "Gemm" || op == "MatMul") return matrix_macs(v);
    return 0;
}

const std::set<std::string, std::less<>>& unit_flop_ops() {
    static const std::set<std::string, std::less<>> ops = {
        "Relu",       "Clip",  "LeakyRelu",  "Sigmoid",     "Sqrt",      "Erf", "Exp",  "Log",      "Tanh",
        "Neg",        "Abs",   "Reciprocal", "HardSigmoid", "HardSwish", "Elu", "Selu", "Softplus", "Mish",
        "Gelu",       "PRelu", "Add",        "Sub",         "Mul",       "Div", "Pow",  "Where",    "Equal",
        "Greater",    "Less",  "Max",        "Min",         "Mod",       "Sum", "Mean", "Sin",      "Cos",
        "Floor",      "Ceil",  "Round",      "Sign",        "And",       "Or",  "Xor",  "Not",      "GreaterOrEqual",
        "LessOrEqual", "CumSum"};
    return ops;
}

std::int64_t pool_flops(const NodeView& v) {
    const auto it = v.node.attributes.find("kernel_shape");
    const auto* kernel = it == v.node.attributes.end() ? nullptr : std::get_if<std::vector<std::int64_t>>(&it->second);
    return kernel == nullptr ? 0 : mul(v.out_elements(), product(*kernel, 0));
}

// The IoU test of every pair of boxes, per batch and class: the most the greedy pass can make
// (it skips boxes already suppressed), so the node counts as a bound.
std::int64_t nms_flops(const NodeView& v) {
    const auto* boxes = v.in(0);
    const auto* scores = v.in(1);
    if (boxes == nullptr || scores == nullptr || boxes->dims.size() != 3 || scores->dims.size() != 3) return 0;
    const std::int64_t n = boxes->dims[1];
    return mul(mul(mul(kNmsFlopsPerPair, scores->dims[0]), scores->dims[1]), mul(n, n - 1) / 2);
}

// Samples per output element: sampling_ratio^2, or with 0 (adaptive, ceil(roi size / output
// size) per axis) at most that of a roi as large as the feature map.
std::int64_t roi_align_samples(const NodeView& v) {
    const std::int64_t ratio = v.attribute("sampling_ratio", 0);
    if (ratio > 0) return mul(ratio, ratio);
    const auto* x = v.in(0);
    if (x == nullptr || x->dims.size() != 4) return 0;
    const auto ceil_div = [](std::int64_t a, std::int64_t b) { return b <= 0 || a <= 0 ? 0 : (a - 1) / b + 1; };
    return mul(ceil_div(x->dims[2], v.attribute("output_height", 1)), ceil_div(x->dims[3], v.attribute("output_width", 1)));
}

std::int64_t other_flops(const NodeView& v, const CostOptions& options) {
    const auto& op = v.node.op_type;
    const std::int64_t n = v.out_elements();
    if (unit_flop_ops().contains(op)) return n;
    if (op == "Softmax" || op == "LogSoftmax") return mul(3, n);
    if (op == "BatchNormalization") return options.fold_batch_norm ? 0 : mul(2, n);
    if (op == "LayerNormalization" || op == "InstanceNormalization") return mul(7, n);
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") return pool_flops(v);
    if (op == "NonMaxSuppression") return nms_flops(v);
    if (op == "RoiAlign") return mul(mul(kRoiAlignFlopsPerSample, n), roi_align_samples(v));
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op.starts_with("Reduce"))
        return v.in(0) == nullptr ? 0 : v.in(0)->elements();
    return 0;
}

bool is_view(std::string_view op) {
    return op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Shape" ||
           op == "Constant" || op == "Identity";
}

void count_bytes(const NodeView& v, NodeCost& cost) {
    if (is_view(v.node.op_type)) return;
    for (std::size_t i = 0; i < v.node.outputs.size(); ++i)
        if (const auto* o = v.out(i)) add_to(cost.bytes_written, o->bytes());
    if (v.node.op_type == "Gather" || v.node.op_type == "GatherElements") {  // what it outputs, and the indices
        cost.bytes_read = cost.bytes_written;
        add_to(cost.bytes_read, v.in(1) == nullptr ? 0 : v.in(1)->bytes());
        return;
    }
    for (std::size_t i = 0; i < v.node.inputs.size(); ++i)
        if (const auto* x = v.in(i)) add_to(cost.bytes_read, x->bytes());
}

void conv_flags(const NodeView& v, NodeCost& cost) {
    const auto* w = v.in(1);
    if (w == nullptr || w->dims.size() < 3) return;
    const std::int64_t groups = v.attribute("group", 1);
    const bool transposed = v.node.op_type == "ConvTranspose";
    const std::int64_t cin = transposed ? w->dims[0] : w->dims[1] * groups;
    const std::int64_t cout = transposed ? w->dims[1] * groups : w->dims[0];
    if (groups > 1 && groups == cin)
        cost.flags.emplace_back("depthwise");
    else if (groups > 1)
        cost.flags.emplace_back("grouped");
    if (product(w->dims, 2) == 1) cost.flags.emplace_back("1x1");
    if (cin % kTensorCoreAlignment != 0 || cout % kTensorCoreAlignment != 0) cost.flags.emplace_back("unaligned");
}

void matrix_flags(const NodeView& v, NodeCost& cost) {
    const auto* a = v.in(0);
    const auto* out = v.out(0);
    if (a == nullptr || out == nullptr || a->dims.empty() || out->dims.empty()) return;
    const std::int64_t k = v.node.op_type == "Gemm" && v.attribute("transA", 0) != 0 ? a->dims.front() : a->dims.back();
    if (k % kTensorCoreAlignment != 0 || out->dims.back() % kTensorCoreAlignment != 0)
        cost.flags.emplace_back("unaligned");
}

using Names = std::set<std::string, std::less<>>;

// BatchNormalization's inputs 3 and 4 (running mean and variance) are state, not trainable
// parameters: torchvision's model.parameters() and TF's trainable variables leave them out.
bool is_batch_norm_statistic(const OnnxNode& node, std::size_t input) {
    return node.op_type == "BatchNormalization" && (input == 3 || input == 4);
}

// Clip's inputs 1 and 2 are its bounds (ReLU6's 0 and 6), fixed numbers rather than weights.
bool is_clip_bound(const OnnxNode& node, std::size_t input) {
    return node.op_type == "Clip" && (input == 1 || input == 2);
}

bool is_parameter_input(const OnnxNode& node, std::size_t input) {
    return !is_batch_norm_statistic(node, input) && !is_clip_bound(node, input);
}

NodeCost node_cost(const NodeView& v, bool inferred, const Names& initializers, const CostOptions& options);

// An If runs the nodes of the branch shape inference took, each counted as if in the graph. Where
// the condition is known only at run time both were taken: the costlier of the two (field by
// field), a bound.
void add_branches(const NodeView& v, const Names& initializers, const CostOptions& options, NodeCost& cost) {
    const auto it = v.node.outputs.empty() ? v.shapes.branches.end() : v.shapes.branches.find(v.node.outputs[0]);
    if (it == v.shapes.branches.end()) return;
    NodeCost most{};
    for (const auto* graph : it->second) {
        NodeCost branch{};
        for (const auto& node : graph->nodes) {
            const NodeCost inner = node_cost(NodeView{node, v.shapes}, true, initializers, options);
            add_to(branch.macs, inner.macs);
            add_to(branch.flops, inner.flops);
            add_to(branch.bytes_read, inner.bytes_read);
            add_to(branch.bytes_written, inner.bytes_written);
            branch.data_dependent = branch.data_dependent || inner.data_dependent;
        }
        most.macs = std::max(most.macs, branch.macs);
        most.flops = std::max(most.flops, branch.flops);
        most.bytes_read = std::max(most.bytes_read, branch.bytes_read);
        most.bytes_written = std::max(most.bytes_written, branch.bytes_written);
        most.data_dependent = most.data_dependent || branch.data_dependent;
    }
    add_to(cost.macs, most.macs);
    add_to(cost.flops, most.flops);
    add_to(cost.bytes_read, most.bytes_read);
    add_to(cost.bytes_written, most.bytes_written);
    cost.data_dependent = cost.data_dependent || most.data_dependent || it->second.size() > 1;
}

NodeCost node_cost_of(const NodeView& v, bool inferred, const Names& initializers, const CostOptions& options) {
    NodeCost cost{v.node.name, v.node.op_type, {}, 0, 0, 0, 0, 0, !inferred, {}};
    for (std::size_t i = 0; i < v.node.outputs.size(); ++i) {
        cost.outputs.push_back(v.out(i) == nullptr ? ValueShape{} : *v.out(i));
        cost.data_dependent = cost.data_dependent || cost.outputs.back().data_dependent;
    }
    for (std::size_t i = 0; i < v.node.inputs.size(); ++i)
        if (initializers.contains(v.node.inputs[i]) && v.in(i) != nullptr && is_parameter_input(v.node, i))
            add_to(cost.parameters, v.in(i)->elements());
    if (!inferred) return cost;
    // A bound at most: how many pairs the greedy pass tests, how many samples adaptive rois take.
    if (v.node.op_type == "NonMaxSuppression" || (v.node.op_type == "RoiAlign" && v.attribute("sampling_ratio", 0) <= 0))
        cost.data_dependent = true;
    cost.macs = macs_of(v);
    cost.flops = mul(2, cost.macs);
    add_to(cost.flops, other_flops(v, options));
    if (!(options.fold_batch_norm && v.node.op_type == "BatchNormalization")) count_bytes(v, cost);
    if (v.node.op_type == "Conv" || v.node.op_type == "ConvTranspose") conv_flags(v, cost);
    if (v.node.op_type == "Gemm" || v.node.op_type == "MatMul") matrix_flags(v, cost);
    if (v.node.op_type == "If") add_branches(v, initializers, options, cost);
    return cost;
}

NodeCost node_cost(const NodeView& v, bool inferred, const Names& initializers, const CostOptions& options) {
    try {
        return node_cost_of(v, inferred, initializers, options);
    } catch (const UserError& e) {
        throw UserError(fmt::format("node {} ({}): {}", v.node.name.empty() ? "(unnamed)" : v.node.name,
                                    v.node.op_type, e.what()));
    }
}

void summarise_flags(ModelCost& cost) {
    struct Count {
        std::int64_t nodes = 0, macs = 0;
        std::string first;
    };
    std::map<std::string, Count> counts;
    for (const auto& node : cost.nodes) {
        for (const auto& flag : node.flags) {
            auto& c = counts[flag];
            if (c.nodes++ == 0) c.first = node.name;
            add_to(c.macs, node.macs);
        }
    }
    static const std::map<std::string, std::string> meaning = {
        {"depthwise", "depthwise convolutions (memory-bound; poor tensor-core use)"},
        {"grouped", "grouped convolutions (small GEMMs per group)"},
        {"1x1", "1x1 convolutions (plain GEMMs; layout and fusion matter)"},
        {"unaligned", fmt::format("convolutions/GEMMs with a channel or feature dimension not a multiple of {} "
                                  "(no tensor-core alignment)",
                                  kTensorCoreAlignment)}};
    const double total = static_cast<double>(std::max<std::int64_t>(cost.totals.macs, 1));
    for (const auto& [flag, c] : counts)
        cost.flags.push_back(fmt::format("{}: {} {}, {:.1f}% of MACs; first: {}", flag, c.nodes, meaning.at(flag),
                                         100.0 * static_cast<double>(c.macs) / total, c.first));
}

void add_totals(CostTotals& totals, const NodeCost& node) {
    try {
        add_to(totals.macs, node.macs);
        add_to(totals.flops, node.flops);
        add_to(totals.bytes_read, node.bytes_read);
        add_to(totals.bytes_written, node.bytes_written);
    } catch (const UserError& e) {
        throw UserError(fmt::format("the model's total up to node {}: {}", node.name, e.what()));
    }
}

}  // namespace

ModelCost estimate_cost(const onnx::OnnxModel& model, const ShapeInference& shapes, const CostOptions& options) {
    Names initializers;
    ModelCost cost;
    Names statistics, bounds;
    for (const auto& node : model.graph.nodes)
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            if (is_batch_norm_statistic(node, i)) statistics.insert(node.inputs[i]);
            if (is_clip_bound(node, i)) bounds.insert(node.inputs[i]);
        }
    for (const auto& init : model.graph.initializers) {
        initializers.insert(init.name);
        // Shapes, axes and indices (int64) and clip bounds are not weights.
        if (init.data_type == onnx::DataType::int64 || bounds.contains(init.name)) continue;
        add_to(statistics.contains(init.name) ? cost.totals.batch_norm_statistics : cost.totals.parameters,
               init.element_count());
    }
    const auto& nodes = model.graph.nodes;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const bool inferred = i < shapes.node_inferred.size() && shapes.node_inferred[i];
        NodeCost node = node_cost(NodeView{nodes[i], shapes}, inferred, initializers, options);
        add_totals(cost.totals, node);
        cost.totals.unknown_nodes += node.unknown ? 1 : 0;
        cost.totals.data_dependent_nodes += node.data_dependent && !node.unknown ? 1 : 0;
        ++cost.histogram[node.op_type];
        cost.nodes.push_back(std::move(node));
    }
    cost.totals.nodes = static_cast<std::int64_t>(nodes.size());
    summarise_flags(cost);
    return cost;
}

}  // namespace inferbench::models
