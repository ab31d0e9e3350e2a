// Runs an ONNX model with LibTorch ops, node by node: an interpreter, so any ONNX file the zoo (or
// PyTorch's exporter) writes runs on LibTorch with the same weights, without Python or TorchScript.
//
// Everything that can be resolved is resolved at load: values become indices into a slot vector,
// attributes and constant inputs (shapes, axes, bounds) are read once, nodes whose inputs are all
// constant are computed once. run() then only indexes vectors and calls LibTorch.
#pragma once

#include <torch/types.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "backends/torch/onnx_interpreter/onnx_fusion.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench::torch_onnx {

struct Step;
struct SourceGraph;
class OnnxProgram;

// A branch of an If whose condition is computed at run time, as a program of its own
// (onnx_program.cpp): its inputs are the outer-scope values it reads.
std::shared_ptr<OnnxProgram> build_branch(std::shared_ptr<const SourceGraph> graph);

// Called around each node run() executes, for a per-node profiler; `step` indexes nodes().
class StepObserver {
public:
    virtual ~StepObserver() = default;
    virtual void before(std::size_t step) = 0;
    virtual void after(std::size_t step) = 0;
};

// A node run() executes (nodes whose inputs are all constant were computed at load and are not among
// them), as the ONNX file names it.
struct ProgramNode {
    std::string name;
    std::string op_type;
};

class OnnxProgram {
public:
    // Reads and prepares the model. Throws UserError for unreadable files and for models with an
    // operator (or an attribute value) the interpreter does not support, naming the node.
    // `fuse`: rewrite the exporters' decomposed layers first (onnx_fusion.hpp).
    static OnnxProgram load(const std::filesystem::path& onnx_file, bool fuse = true);
    static OnnxProgram from_model(const models::onnx::OnnxModel& model, std::string_view source_name,
                                  bool fuse = true);

    OnnxProgram(OnnxProgram&&) noexcept;
    OnnxProgram& operator=(OnnxProgram&&) noexcept;
    ~OnnxProgram();

    // Places the weights on `device` and sets the floating-point type every computation uses:
    // kFloat, kHalf or kBFloat16 (floating initializers are converted from the file's values each
    // time, so switching back loses nothing), or kDouble, a float64 reference against which tests
    // measure fp32 results. channels_last stores 4-D weights and inputs NHWC.
    // Integer constants stay on the CPU: they are shapes and indices, read on the host.
    void to(torch::Device device, torch::ScalarType float_type, bool channels_last);

    // The graph inputs run() takes, in order (initializers listed as inputs are left out).
    const std::vector<models::onnx::OnnxValueInfo>& inputs() const { return inputs_; }
    const std::vector<models::onnx::OnnxValueInfo>& outputs() const { return outputs_; }
    torch::Device device() const { return device_; }
    torch::ScalarType float_type() const { return float_type_; }
    const FusionCounts& fusion_counts() const { return fusion_counts_; }

    // One inference. Inputs are checked against the declared ranks and fixed dimensions
    // (std::invalid_argument) and moved to the program's device, floating ones converted to its
    // float type (a no-op when the caller already did). Returns the graph outputs in order.
    // Errors inside LibTorch become std::runtime_error naming the node.
    // `observer`, where given, is called around each node.
    std::vector<torch::Tensor> run(const std::vector<torch::Tensor>& inputs, StepObserver* observer = nullptr) const;

    // The nodes run() executes, in order. An If whose condition is known at load (or, after
    // specialize(), follows from the input shapes) is not among them: the nodes of the branch it
    // takes are. An If that is among them picks its branch at every run.
    std::vector<ProgramNode> nodes() const;

    // Fixes the input shapes to those of `inputs` (one run computes them) and folds every value
    // that then depends on shapes and constants only (Shape outputs, what is computed from them:
    // reshape targets, pads, attention scales, masks) into constants, so run() executes no shape
    // arithmetic and no host value meets a device tensor: what a captured CUDA graph needs. Integer
    // constants then live on the device as well (to() keeps them on the CPU before). run() then
    // takes only inputs of these shapes (std::invalid_argument otherwise); specialize() again for
    // others. Keeps the device and float type.
    void specialize(const std::vector<torch::Tensor>& inputs);
    bool specialized() const { return !specialized_shapes_.empty(); }

private:
    friend std::shared_ptr<OnnxProgram> build_branch(std::shared_ptr<const SourceGraph> graph);
    OnnxProgram();
    static OnnxProgram build(std::shared_ptr<const SourceGraph> graph,
                             const std::vector<std::pair<std::string, torch::Tensor>>& known);
    torch::Tensor prepare_input(const torch::Tensor& tensor, std::size_t index) const;
    // The one-element floating-point constants the program reads, by value name, as the file (or the
    // folding of its shapes) gave them.
    KnownValues scalar_constants() const;
    void check_inputs(const std::vector<torch::Tensor>& inputs) const;
    // Runs every step; `captured`, where given, receives the values of the slots `wanted` marks.
    std::vector<torch::Tensor> execute(const std::vector<torch::Tensor>& inputs, StepObserver* observer,
                                       const std::vector<bool>* wanted, std::vector<torch::Tensor>* captured) const;

    std::string source_;
    std::shared_ptr<const SourceGraph> graph_;  // what build() made this program from
    std::vector<std::vector<std::int64_t>> specialized_shapes_;
    std::vector<std::string> slot_names_;
    std::vector<models::onnx::OnnxValueInfo> inputs_;
    std::vector<models::onnx::OnnxValueInfo> outputs_;
    std::size_t slot_count_ = 0;
    std::vector<std::size_t> input_slots_;
    std::vector<std::size_t> output_slots_;
    std::vector<std::size_t> constant_slots_;
    std::vector<torch::Tensor> file_constants_;  // as read (and folded) at load, on the CPU
    std::vector<torch::Tensor> constants_;       // as run() uses them, after to()
    std::vector<Step> steps_;
    torch::Device device_ = torch::kCPU;
    torch::ScalarType float_type_ = torch::kFloat;
    bool channels_last_ = false;
    bool branch_ = false;  // an If branch: its inputs are outer values, already where they belong
    FusionCounts fusion_counts_;
};

}  // namespace inferbench::torch_onnx
