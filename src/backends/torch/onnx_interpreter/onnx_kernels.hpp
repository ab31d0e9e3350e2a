// Internal to the ONNX interpreter (onnx_program.cpp): how one ONNX node becomes a LibTorch kernel.
// Each operator has a factory that reads the node's attributes, and any inputs that are constant at
// load time, once; the kernel it returns only runs LibTorch ops.
#pragma once

#include <torch/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/onnx_reader.hpp"

namespace inferbench::torch_onnx {

namespace onnx = models::onnx;

// What a kernel may need to know about the program at run time (to() can change it after load).
struct RunContext {
    torch::Device device = torch::kCPU;
    torch::ScalarType float_type = torch::kFloat;  // every floating-point value computes in this type
};

// Runs one node: `in` has one tensor per node input (undefined for an optional input left out),
// `out` one slot per node output (kernels may leave unwanted optional outputs undefined).
using Kernel = std::function<void(const RunContext&, std::span<const torch::Tensor> in, std::span<torch::Tensor> out)>;

// A node as a kernel factory sees it. Its accessors throw UserError "SOURCE: node 'NAME' (OP): ..."
// for missing or mistyped attributes and inputs, so a model the interpreter cannot run fails at load.
class NodeContext {
public:
    // `constants[i]`: input i's value if it is known at load time (an initializer, a Constant or
    // computed from those only), else nullptr. Valid during the factory call only: factories copy
    // what they need (as host values, never device tensors that to() would leave stale).
    NodeContext(const onnx::OnnxNode& node, std::int64_t opset, std::vector<const torch::Tensor*> constants,
                std::string_view source);

    const onnx::OnnxNode& node() const { return node_; }
    std::int64_t opset() const { return opset_; }

    bool has_input(std::size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
    bool has_output(std::size_t i) const { return i < node_.outputs.size() && !node_.outputs[i].empty(); }
    const torch::Tensor* constant(std::size_t i) const { return i < constants_.size() ? constants_[i] : nullptr; }
    // Fails unless inputs [0, required) are present and there are at most `allowed` inputs.
    void expect_inputs(std::size_t required, std::size_t allowed) const;
    // Fails if an output from index `supported` on is wanted (e.g. MaxPool's Indices).
    void expect_outputs(std::size_t supported) const;

    bool has_attribute(std::string_view name) const;
    std::int64_t int_attribute(std::string_view name, std::optional<std::int64_t> fallback = std::nullopt) const;
    float float_attribute(std::string_view name, std::optional<float> fallback = std::nullopt) const;
    std::string string_attribute(std::string_view name, std::optional<std::string> fallback = std::nullopt) const;
    std::vector<std::int64_t> ints_attribute(std::string_view name,
                                             std::optional<std::vector<std::int64_t>> fallback = std::nullopt) const;
    const onnx::OnnxTensor& tensor_attribute(std::string_view name) const;

    [[noreturn]] void fail(std::string_view what) const;

private:
    const onnx::OnnxAttributeValue* find(std::string_view name) const;

    const onnx::OnnxNode& node_;
    std::int64_t opset_;
    std::vector<const torch::Tensor*> constants_;
    std::string where_;
};

using KernelFactory = Kernel (*)(const NodeContext&);

// The factory for `op_type` in the default domain, or nullptr if the interpreter lacks it.
KernelFactory find_kernel_factory(std::string_view op_type);
// Every supported op_type, sorted; for error messages.
std::vector<std::string> supported_operators();

// Wraps a single-output function as a Kernel.
template <typename Fn>
Kernel single_output(Fn fn) {
    return [fn = std::move(fn)](const RunContext& ctx, std::span<const torch::Tensor> in,
                                std::span<torch::Tensor> out) { out[0] = fn(ctx, in); };
}

// --- Helpers shared by the operator files ---

// An int64 list input (shape, axes, pads, ...): read once at load if constant, else at every run.
class IntListInput {
public:
    IntListInput() = default;
    IntListInput(const NodeContext& ctx, std::size_t index);
    bool present() const { return present_; }
    std::vector<std::int64_t> get(std::span<const torch::Tensor> in) const;

private:
    bool present_ = false;
    std::size_t index_ = 0;
    std::optional<std::vector<std::int64_t>> constant_;
};

std::vector<std::int64_t> to_int64s(const torch::Tensor& t);

// The most elements a tensor whose shape comes from values in the file (ConstantOfShape, Range,
// Tile, Expand, Pad) may have: far above any real model's, low enough that a hostile file's
// shapes fail with a clear error rather than exhaust memory. The fuzz build lowers it.
#ifndef INFERBENCH_MAX_SHAPE_ELEMENTS
#define INFERBENCH_MAX_SHAPE_ELEMENTS (std::int64_t{1} << 31)
#endif
inline constexpr std::int64_t kMaxShapeElements = INFERBENCH_MAX_SHAPE_ELEMENTS;
// Throws std::invalid_argument naming `what` if a dimension is negative or there are more than
// kMaxShapeElements elements.
void check_shape(c10::IntArrayRef shape, std::string_view what);
// `axis` in [-rank, rank) as a non-negative index; throws std::out_of_range otherwise.
std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank);

// A view whose last axis is dense and whose leading axes are those of a dense tensor in another order
// (an activation transposed between batch-first and sequence-first, as nn.MultiheadAttention's
// export does): the order that makes x.permute(order) that dense tensor, the last axis last. nullopt
// for a contiguous x and for any other layout. Row-wise work (a GEMM over the last axis, a norm over
// it) runs on the dense tensor and its result is permuted back, where the op would copy x first.
std::optional<std::vector<std::int64_t>> dense_order(const torch::Tensor& x);
std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& order);
// Moves CPU tensors to the device of the others when they differ: shape arithmetic lives on the
// CPU, and meets device tensors only where a model mixes the two.
std::vector<torch::Tensor> on_common_device(std::span<const torch::Tensor> tensors);

// ONNX element types as LibTorch scalar types; floating types map to `float_type` (the program's).
torch::ScalarType to_scalar_type(onnx::DataType type, torch::ScalarType float_type);
std::optional<torch::ScalarType> scalar_type_of(onnx::DataType type);  // nullopt: no LibTorch equivalent
// A tensor read from the file, on the CPU in its own element type.
torch::Tensor to_torch(const onnx::OnnxTensor& tensor, std::string_view where);

// The operator files' registration tables.
struct KernelEntry {
    std::string_view op_type;
    KernelFactory factory;
};
std::span<const KernelEntry> nn_kernels();
std::span<const KernelEntry> math_kernels();
std::span<const KernelEntry> shape_kernels();
std::span<const KernelEntry> index_kernels();      // onnx_ops_index.cpp
std::span<const KernelEntry> detection_kernels();  // onnx_ops_detection.cpp
Kernel make_resize(const NodeContext& ctx);  // onnx_ops_resize.cpp, registered with the layers

}  // namespace inferbench::torch_onnx
