// Loading (name resolution, constant folding, release schedule) and running of an OnnxProgram.
#include "backends/torch/onnx_program.hpp"

#include <c10/core/InferenceMode.h>

#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/torch/onnx_kernels.hpp"
#include "core/error.hpp"

namespace inferbench::torch_onnx {

namespace onnx = models::onnx;

// One node as run() executes it.
struct Step {
    Kernel kernel;
    std::vector<std::size_t> inputs;   // slots; kAbsent for an optional input left out
    std::vector<std::size_t> outputs;  // slots; kAbsent for an output nobody wants
    std::vector<std::size_t> release;  // slots whose last reader this step is: freed right after it
    std::string label;                 // "SOURCE: node 'NAME' (OP)", for run-time errors
    ProgramNode node;                  // the ONNX node's name and operator
};

namespace {

constexpr std::size_t kAbsent = static_cast<std::size_t>(-1);

bool is_floating(const torch::Tensor& t) { return torch::isFloatingType(t.scalar_type()); }

// Builds a program from a model: one pass over the nodes in their (topological) order.
class Loader {
public:
    Loader(const onnx::OnnxModel& model, std::string_view source)
        : source_(source), opset_(std::max<std::int64_t>(model.opset_version(), 1)) {}

    std::size_t new_slot(const std::string& name, std::string_view what) {
        if (!slots_.emplace(name, constants_.size()).second) {
            throw UserError(fmt::format("{}: value '{}' ({}) is defined twice", source_, name, what));
        }
        constants_.emplace_back();
        return constants_.size() - 1;
    }

    std::size_t slot_of(const std::string& name, std::string_view user) const {
        const auto it = slots_.find(name);
        if (it == slots_.end()) {
            throw UserError(fmt::format("{}: {} uses '{}', which no earlier node, initializer or graph input defines",
                                        source_, user, name));
        }
        return it->second;
    }

    void add_node(const onnx::OnnxNode& node, std::vector<Step>& steps);
    // Runs a step whose inputs are all constant once, now, making its outputs constants too.
    void fold(const Step& step);
    // Marks the slots the graph outputs read; fills `release` of each step.
    void schedule_releases(std::vector<Step>& steps, const std::vector<std::size_t>& output_slots) const;

    std::string source_;
    std::int64_t opset_;
    std::unordered_map<std::string, std::size_t> slots_;
    std::vector<torch::Tensor> constants_;  // per slot: the value when known at load, else undefined
};

KernelFactory factory_for(const onnx::OnnxNode& node, std::string_view source) {
    const std::string where = fmt::format("{}: node '{}' ({})", source, node.name, node.op_type);
    if (node.domain == kFusedDomain) {
        if (const KernelFactory fused = find_fused_kernel_factory(node.op_type)) return fused;
    }
    if (!node.domain.empty() && node.domain != "ai.onnx") {
        throw UserError(fmt::format("{}: operators of domain '{}' are not supported, only the default ONNX domain",
                                    where, node.domain));
    }
    const KernelFactory factory = find_kernel_factory(node.op_type);
    if (factory == nullptr) {
        throw UserError(fmt::format("{}: operator {} is not supported by the LibTorch ONNX interpreter; supported: {}",
                                    where, node.op_type, fmt::join(supported_operators(), ", ")));
    }
    return factory;
}

void Loader::add_node(const onnx::OnnxNode& node, std::vector<Step>& steps) {
    const KernelFactory factory = factory_for(node, source_);
    Step step;
    step.label = fmt::format("{}: node '{}' ({})", source_, node.name, node.op_type);
    step.node = {node.name, node.op_type};
    std::vector<const torch::Tensor*> constant_inputs;
    bool all_constant = true;
    for (const std::string& name : node.inputs) {
        const std::size_t slot = name.empty() ? kAbsent : slot_of(name, fmt::format("node '{}'", node.name));
        step.inputs.push_back(slot);
        const bool known = slot != kAbsent && constants_[slot].defined();
        constant_inputs.push_back(known ? &constants_[slot] : nullptr);
        all_constant = all_constant && (slot == kAbsent || known);
    }
    step.kernel = factory(NodeContext(node, opset_, std::move(constant_inputs), source_));
    for (const std::string& name : node.outputs) {
        step.outputs.push_back(name.empty() ? kAbsent : new_slot(name, fmt::format("output of node '{}'", node.name)));
    }
    if (all_constant) {
        fold(step);
    } else {
        steps.push_back(std::move(step));
    }
}

// Computed in fp32 on the CPU; to() then converts the results like the weights.
void Loader::fold(const Step& step) {
    std::vector<torch::Tensor> in;
    for (const std::size_t slot : step.inputs) in.push_back(slot == kAbsent ? torch::Tensor() : constants_[slot]);
    std::vector<torch::Tensor> out(step.outputs.size());
    try {
        const torch::NoGradGuard no_grad;
        step.kernel(RunContext{}, in, out);
    } catch (const std::exception& e) {
        throw UserError(fmt::format("{}: cannot compute this constant node: {}", step.label, e.what()));
    }
    for (std::size_t k = 0; k < out.size(); ++k) {
        if (step.outputs[k] != kAbsent) constants_[step.outputs[k]] = out[k];
    }
}

void Loader::schedule_releases(std::vector<Step>& steps, const std::vector<std::size_t>& output_slots) const {
    // A slot is freed after the last step that reads it, unless it is a constant or a graph output.
    std::vector<std::size_t> last_reader(constants_.size(), kAbsent);
    for (std::size_t s = 0; s < steps.size(); ++s) {
        for (const std::size_t slot : steps[s].outputs) {
            if (slot != kAbsent) last_reader[slot] = s;  // never read: freed right away
        }
        for (const std::size_t slot : steps[s].inputs) {
            if (slot != kAbsent) last_reader[slot] = s;
        }
    }
    std::vector<bool> keep(constants_.size(), false);
    for (const std::size_t slot : output_slots) keep[slot] = true;
    for (std::size_t slot = 0; slot < constants_.size(); ++slot) {
        if (last_reader[slot] != kAbsent && !keep[slot] && !constants_[slot].defined()) {
            steps[last_reader[slot]].release.push_back(slot);
        }
    }
}

}  // namespace

OnnxProgram::OnnxProgram() = default;
OnnxProgram::OnnxProgram(OnnxProgram&&) noexcept = default;
OnnxProgram& OnnxProgram::operator=(OnnxProgram&&) noexcept = default;
OnnxProgram::~OnnxProgram() = default;

OnnxProgram OnnxProgram::load(const std::filesystem::path& onnx_file, bool fuse) {
    return from_model(onnx::read_onnx_file(onnx_file), onnx_file.string(), fuse);
}

OnnxProgram OnnxProgram::from_model(const onnx::OnnxModel& model, std::string_view source_name, bool fuse) {
    OnnxProgram program;
    program.source_ = source_name;
    Loader loader(model, source_name);
    for (const auto& init : model.graph.initializers) {
        const std::size_t slot = loader.new_slot(init.name, "initializer");
        loader.constants_[slot] = to_torch(init, source_name);
    }
    for (const auto& input : model.graph.inputs) {
        if (loader.slots_.contains(input.name)) continue;  // an initializer listed as input (IR < 4)
        program.input_slots_.push_back(loader.new_slot(input.name, "graph input"));
        program.inputs_.push_back(input);
    }
    FusedGraph fused = fuse ? fuse_graph(model) : FusedGraph{model.graph.nodes, {}};
    program.fusion_counts_ = fused.counts;
    for (const auto& node : fused.nodes) loader.add_node(node, program.steps_);
    for (const auto& output : model.graph.outputs) {
        program.output_slots_.push_back(loader.slot_of(output.name, "graph output"));
        program.outputs_.push_back(output);
    }
    loader.schedule_releases(program.steps_, program.output_slots_);

    // Only the constants something still reads: weights folded into other constants are dropped.
    std::vector<bool> used(loader.constants_.size(), false);
    for (const Step& step : program.steps_) {
        for (const std::size_t slot : step.inputs) {
            if (slot != kAbsent) used[slot] = true;
        }
    }
    for (const std::size_t slot : program.output_slots_) used[slot] = true;
    for (std::size_t slot = 0; slot < loader.constants_.size(); ++slot) {
        if (used[slot] && loader.constants_[slot].defined()) {
            program.constant_slots_.push_back(slot);
            program.file_constants_.push_back(loader.constants_[slot]);
        }
    }
    program.slot_count_ = loader.constants_.size();
    program.to(torch::kCPU, torch::kFloat, false);
    return program;
}

void OnnxProgram::to(torch::Device device, torch::ScalarType float_type, bool channels_last) {
    if (float_type != torch::kFloat && float_type != torch::kHalf && float_type != torch::kBFloat16 &&
        float_type != torch::kDouble) {
        throw std::invalid_argument(fmt::format(
            "OnnxProgram::to(): float type {} is not one of float, half, bfloat16, double", c10::toString(float_type)));
    }
    std::vector<torch::Tensor> converted;
    converted.reserve(file_constants_.size());
    for (const torch::Tensor& t : file_constants_) {
        if (!is_floating(t)) {
            converted.push_back(t);
            continue;
        }
        torch::Tensor c = t.to(device, float_type);
        if (channels_last && c.dim() == 4) c = c.contiguous(torch::MemoryFormat::ChannelsLast);
        converted.push_back(std::move(c));
    }
    constants_ = std::move(converted);
    device_ = device;
    float_type_ = float_type;
    channels_last_ = channels_last;
}

torch::Tensor OnnxProgram::prepare_input(const torch::Tensor& tensor, std::size_t index) const {
    const onnx::OnnxValueInfo& info = inputs_[index];
    if (info.has_shape) {
        bool matches = tensor.dim() == static_cast<std::int64_t>(info.dims.size());
        for (std::size_t d = 0; matches && d < info.dims.size(); ++d) {
            const auto* fixed = std::get_if<std::int64_t>(&info.dims[d]);
            matches = fixed == nullptr || *fixed == tensor.size(static_cast<std::int64_t>(d));
        }
        if (!matches) {
            throw std::invalid_argument(fmt::format("{}: input '{}' has shape {}, which its declared shape rejects",
                                                    source_, info.name, fmt::join(tensor.sizes(), "x")));
        }
    }
    if (!is_floating(tensor)) return tensor.to(device_);
    torch::Tensor t = tensor.to(device_, float_type_);
    return channels_last_ && t.dim() == 4 ? t.contiguous(torch::MemoryFormat::ChannelsLast) : t;
}

std::vector<ProgramNode> OnnxProgram::nodes() const {
    std::vector<ProgramNode> out;
    out.reserve(steps_.size());
    for (const Step& step : steps_) out.push_back(step.node);
    return out;
}

std::vector<torch::Tensor> OnnxProgram::run(const std::vector<torch::Tensor>& inputs, StepObserver* observer) const {
    if (inputs.size() != input_slots_.size()) {
        throw std::invalid_argument(
            fmt::format("{}: {} inputs given, the model takes {}", source_, inputs.size(), input_slots_.size()));
    }
    const c10::InferenceMode inference_mode;
    const RunContext context{device_, float_type_};
    std::vector<torch::Tensor> values(slot_count_);
    for (std::size_t k = 0; k < constant_slots_.size(); ++k) values[constant_slots_[k]] = constants_[k];
    for (std::size_t k = 0; k < inputs.size(); ++k) values[input_slots_[k]] = prepare_input(inputs[k], k);

    std::vector<torch::Tensor> in;  // reused: no allocation per node once grown
    std::vector<torch::Tensor> out;
    for (std::size_t index = 0; index < steps_.size(); ++index) {
        const Step& step = steps_[index];
        in.clear();
        for (const std::size_t slot : step.inputs) in.push_back(slot == kAbsent ? torch::Tensor() : values[slot]);
        out.assign(step.outputs.size(), torch::Tensor());
        try {
            if (observer) observer->before(index);
            step.kernel(context, in, out);
            if (observer) observer->after(index);
        } catch (const c10::Error& e) {
            throw std::runtime_error(fmt::format("{}: {}", step.label, e.what_without_backtrace()));
        } catch (const std::exception& e) {
            throw std::runtime_error(fmt::format("{}: {}", step.label, e.what()));
        }
        for (std::size_t k = 0; k < out.size(); ++k) {
            if (step.outputs[k] != kAbsent) values[step.outputs[k]] = std::move(out[k]);
        }
        for (const std::size_t slot : step.release) values[slot].reset();
    }
    std::vector<torch::Tensor> results;
    results.reserve(output_slots_.size());
    for (const std::size_t slot : output_slots_) results.push_back(values[slot]);
    return results;
}

}  // namespace inferbench::torch_onnx
