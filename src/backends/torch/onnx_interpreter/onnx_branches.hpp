// Internal to the ONNX interpreter (onnx_program.cpp): the If operator. Where its condition is known
// at load the loader inlines the branch it takes; otherwise both branches become programs of their
// own (build_branch) and a kernel runs the one the condition picks, at every run.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"

namespace inferbench::torch_onnx {

struct IfBranches {
    const onnx::OnnxGraph* then_graph = nullptr;
    const onnx::OnnxGraph* else_graph = nullptr;
};

// The node's two branches. Throws UserError naming `where` unless the node has one condition input
// and both branch attributes, each with one output per node output.
IfBranches if_branches(const onnx::OnnxNode& node, std::string_view where);

// The names `graph` (and the graphs nested in it) reads without defining them: values of the
// enclosing scopes, sorted.
std::vector<std::string> outer_names(const onnx::OnnxGraph& graph);

// A known condition's truth; throws std::invalid_argument unless it has exactly one element.
bool condition_value(const torch::Tensor& condition);

// Runs `then_program` or `else_program` on in[1...] (the outer values both take, in their input
// order) as in[0], the condition, says; on the device and float type of the calling program.
Kernel make_if_kernel(std::shared_ptr<OnnxProgram> then_program, std::shared_ptr<OnnxProgram> else_program);

}  // namespace inferbench::torch_onnx
