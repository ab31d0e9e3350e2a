// Graph rewrites the ONNX interpreter applies before it builds its steps: exporters decompose the
// layers PyTorch runs as one kernel (GELU into Div-Erf-Add-Mul-Mul, LayerNorm into nine element-wise
// nodes, attention into MatMul-Softmax-MatMul, a Linear into MatMul then Add), and each extra node is
// one more pass over memory. Every rewrite is matched exactly: an intermediate value that anything
// else reads (another node, a graph output) keeps the nodes as they are.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench::torch_onnx {

// The domain of the fused operators that ONNX itself lacks (Linear, RMSNormalization, Attention);
// the rewrites that ONNX has an operator for (Gelu, LayerNormalization) write that operator.
inline constexpr std::string_view kFusedDomain = "inferbench.fused";

// How many patterns of each kind were rewritten.
struct FusionCounts {
    int gelu = 0;
    int layer_norm = 0;
    int rms_norm = 0;
    int attention = 0;
    int linear = 0;

    int total() const { return gelu + layer_norm + rms_norm + attention + linear; }
    FusionCounts& operator+=(const FusionCounts& more);
    // "fused 12 GELU, 25 LayerNorm, 12 attention, 48 Linear"; "no fusions" when there were none.
    std::string summary() const;
};

struct FusedGraph {
    std::vector<onnx::OnnxNode> nodes;  // in a topological order, as the graph's were
    FusionCounts counts;
};

// The graph's nodes with every recognized pattern replaced by one node.
FusedGraph fuse_graph(const onnx::OnnxModel& model);

// Values that specialize() computed for one set of input shapes, by name.
using KnownValues = std::unordered_map<std::string, torch::Tensor>;

// The rewrites again on a fused graph's nodes, with the values known after specialization as
// constants: patterns whose scalars come from shapes (an attention scale of 1 / sqrt(Shape(q)[-1]))
// fuse now, and the scalars by which PyTorch's SDPA export scales Q and K^T join a fused Attention's
// scale, so those Muls no longer run. Counts only what this pass rewrote.
FusedGraph fuse_specialized(const std::vector<onnx::OnnxNode>& nodes, const std::vector<onnx::OnnxValueInfo>& outputs,
                            std::int64_t opset, const KnownValues& known);

// The kernel factory of a kFusedDomain operator, or nullptr.
KernelFactory find_fused_kernel_factory(std::string_view op_type);

}  // namespace inferbench::torch_onnx
