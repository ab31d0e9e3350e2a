// Per-node cost of an ONNX graph with inferred shapes: parameters, MACs, FLOPs, bytes moved and
// arithmetic intensity, plus flags for shapes that run badly on tensor cores. Pure functions.
//
// Conventions (stated in every report):
// - 1 MAC (multiply-accumulate) = 2 FLOPs. MACs are counted for Conv, ConvTranspose, Gemm and
//   MatMul only (as fvcore and torchvision's "GFLOPS" column, which are MACs): Conv =
//   N*Cout*prod(out spatial)*(Cin/groups)*prod(kernel); ConvTranspose = N*Cin*prod(in spatial)*
//   (Cout/groups)*prod(kernel); Gemm/MatMul = prod(output dims)*K. Bias additions are not counted.
// - Every other op counts FLOPs, not MACs: 1 FLOP per output element for elementwise arithmetic and
//   activations (Relu, Sigmoid, Erf, Sqrt, Exp, Pow, Add, Mul, ...: a transcendental counts as 1);
//   Softmax 3 per element (exp, sum, divide); BatchNormalization 2 per element (scale, shift), 0 when
//   folded into the preceding convolution; LayerNormalization and InstanceNormalization 7 per
//   element (mean 1, subtract 1, variance 2, normalise 1, scale and shift 2); pooling: kernel
//   elements per output element; GlobalAveragePool and Reduce*: 1 per input element.
// - Data movement (Reshape, Transpose, Concat, Slice, Gather, Cast, Resize, ...) counts 0 FLOPs.
// - Bytes read = non-initializer inputs + initializers (weights), bytes written = outputs, at their
//   element size; Gather reads only the rows it outputs (an embedding lookup does not read the
//   table); view ops (Reshape, Flatten, Squeeze, Unsqueeze, Shape, Constant, Identity) move 0 bytes.
// - If counts the nodes of the branch it takes (of both where the condition is not folded).
// - Intensity = FLOPs / (bytes read + bytes written).
// - A node whose inputs are unknown, or whose op is unknown, counts 0 and is counted in
//   unknown_nodes: the totals are then lower bounds. A node whose sizes depend on the data
//   (after NonZero, NonMaxSuppression, ...) is costed at the largest sizes the data allows and
//   counted in data_dependent_nodes: the totals are then upper bounds (for costs that grow with
//   those sizes, as a detection head's do).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/onnx_reader.hpp"
#include "models/shape_inference.hpp"

namespace inferbench::models {

struct CostOptions {
    bool fold_batch_norm = false;  // true: BatchNormalization counts 0 FLOPs and 0 bytes (folded into Conv)
};

struct NodeCost {
    std::string name;
    std::string op_type;
    std::vector<ValueShape> outputs;
    std::int64_t parameters = 0;  // elements of initializers feeding the node (BN running statistics apart)
    std::int64_t macs = 0;
    std::int64_t flops = 0;
    std::int64_t bytes_read = 0;
    std::int64_t bytes_written = 0;
    bool unknown = false;            // unknown op, or shapes that could not be inferred
    std::vector<std::string> flags;  // "depthwise", "grouped", "1x1", "unaligned"
    bool data_dependent = false;     // costed at the largest sizes the data allows

    double intensity() const;
};

struct CostTotals {
    // Trainable parameters, every initializer element once: weights, biases, BN scale and shift (no
    // int64 shape or index constants, no Clip bounds); the convention of the zoo's figures, `list
    // models` and the summary's "params M".
    std::int64_t parameters = 0;
    std::int64_t batch_norm_statistics = 0;  // BN running mean and variance elements, not in `parameters`
    std::int64_t macs = 0;
    std::int64_t flops = 0;  // 2 * macs + every other op's FLOPs
    std::int64_t bytes_read = 0;
    std::int64_t bytes_written = 0;
    std::int64_t nodes = 0;
    std::int64_t unknown_nodes = 0;
    std::int64_t data_dependent_nodes = 0;

    double intensity() const;
};

struct ModelCost {
    std::vector<NodeCost> nodes;
    CostTotals totals;
    std::map<std::string, std::int64_t> histogram;  // op type -> node count
    std::vector<std::string> flags;                 // model-level summary of the node flags
};

ModelCost estimate_cost(const onnx::OnnxModel& model, const ShapeInference& shapes, const CostOptions& options = {});

// Conventions for the detection heads' operators (cmd_models.cpp's conventions line says them):
// NonMaxSuppression's IoU test of a box pair (4 min/max, 2 widths, 2 clamps, a product, the union's
// add and subtract, a divide, a compare) and RoiAlign's bilinear sample (4 corners weighted and
// added; the weights themselves are per row and column, not counted).
inline constexpr std::int64_t kNmsFlopsPerPair = 13;
inline constexpr std::int64_t kRoiAlignFlopsPerSample = 8;

// The alignment tensor cores want for channel and feature dimensions (fp16/bf16: multiples of 8).
inline constexpr std::int64_t kTensorCoreAlignment = 8;

}  // namespace inferbench::models
