#include "backends/torch/onnx_interpreter/onnx_branches.hpp"

#include <mutex>
#include <set>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench::torch_onnx {

namespace {

void collect_outer_names(const onnx::OnnxGraph& graph, std::set<std::string>& out) {
    std::set<std::string> defined;
    for (const auto& init : graph.initializers) defined.insert(init.name);
    for (const auto& input : graph.inputs) defined.insert(input.name);
    std::set<std::string> used;
    for (const auto& node : graph.nodes) {
        for (const std::string& name : node.inputs) {
            if (!name.empty()) used.insert(name);
        }
        for (const auto& [attribute, subgraph] : node.subgraphs) {
            if (subgraph) collect_outer_names(*subgraph, used);
        }
        for (const std::string& name : node.outputs) defined.insert(name);
    }
    for (const auto& output : graph.outputs) used.insert(output.name);
    for (const std::string& name : used) {
        if (!defined.contains(name)) out.insert(name);
    }
}

}  // namespace

IfBranches if_branches(const onnx::OnnxNode& node, std::string_view where) {
    if (node.inputs.size() != 1 || node.inputs[0].empty()) {
        throw UserError(fmt::format("{}: If takes one input, the condition; it has {}", where, node.inputs.size()));
    }
    IfBranches branches;
    for (const auto& [name, target] : {std::pair{"then_branch", &branches.then_graph},
                                       std::pair{"else_branch", &branches.else_graph}}) {
        const auto it = node.subgraphs.find(name);
        if (it == node.subgraphs.end() || !it->second) {
            throw UserError(fmt::format("{}: attribute {} (a graph) is missing", where, name));
        }
        if (it->second->outputs.size() != node.outputs.size()) {
            throw UserError(fmt::format("{}: {} has {} outputs, the node {}", where, name, it->second->outputs.size(),
                                        node.outputs.size()));
        }
        *target = it->second.get();
    }
    return branches;
}

std::vector<std::string> outer_names(const onnx::OnnxGraph& graph) {
    std::set<std::string> names;
    collect_outer_names(graph, names);
    return {names.begin(), names.end()};
}

bool condition_value(const torch::Tensor& condition) {
    if (condition.numel() != 1) {
        throw std::invalid_argument(
            fmt::format("the condition has {} elements; If needs exactly one", condition.numel()));
    }
    return condition.item().toBool();
}

Kernel make_if_kernel(std::shared_ptr<OnnxProgram> then_program, std::shared_ptr<OnnxProgram> else_program) {
    // to() on first use and after the calling program moves: the branches follow its device and type.
    auto mutex = std::make_shared<std::mutex>();
    return [then_program = std::move(then_program), else_program = std::move(else_program), mutex](
               const RunContext& ctx, std::span<const torch::Tensor> in, std::span<torch::Tensor> out) {
        OnnxProgram& branch = condition_value(in[0]) ? *then_program : *else_program;
        {
            const std::lock_guard lock(*mutex);
            if (branch.device() != ctx.device || branch.float_type() != ctx.float_type) {
                branch.to(ctx.device, ctx.float_type, false);
            }
        }
        std::vector<torch::Tensor> results = branch.run(std::vector<torch::Tensor>(in.begin() + 1, in.end()));
        for (std::size_t k = 0; k < out.size(); ++k) out[k] = std::move(results[k]);
    };
}

}  // namespace inferbench::torch_onnx
