// Loading (name resolution, constant folding, release schedule) and running of an OnnxProgram.
#include "backends/torch/onnx_interpreter/onnx_program.hpp"

#include <c10/core/InferenceMode.h>

#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/torch/onnx_interpreter/onnx_branches.hpp"
#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"
#include "backends/torch/onnx_interpreter/onnx_shape_analysis.hpp"
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

// The model as a program is built from it, kept so that specialize() can build it again.
// Initializers are held as the tensors the program's constants share.
struct SourceGraph {
    std::string source;  // the file's name, for messages
    std::int64_t opset = 1;
    std::vector<onnx::OnnxNode> nodes;
    std::vector<std::pair<std::string, torch::Tensor>> initializers;
    std::vector<onnx::OnnxValueInfo> inputs;
    std::vector<onnx::OnnxValueInfo> outputs;
    FusionCounts fusion_counts;  // what from_model's fusion rewrote (onnx_fusion.hpp)
    bool fused = false;          // whether from_model rewrote (and specialize() may rewrite more)
};

namespace {

constexpr std::size_t kAbsent = kAbsentSlot;

bool is_floating(const torch::Tensor& t) { return torch::isFloatingType(t.scalar_type()); }

// Finite constants beyond fp16's or bf16's range saturate to its largest finite value instead of
// rounding to infinity: exporters write masks as torch.finfo(float32).min, and 0 * -inf would be NaN
// where 0 * -65504 is the 0 the model means. Infinities and NaN stay as they are.
torch::Tensor narrowed(const torch::Tensor& t, torch::ScalarType float_type) {
    if (float_type != torch::kHalf && float_type != torch::kBFloat16) return t;
    const double largest = float_type == torch::kHalf ? 65504.0 : 3.3895313892515355e38;
    return torch::where(torch::isfinite(t), t.clamp(-largest, largest), t);
}

// Builds a program from a model: one pass over the nodes in their (topological) order.
class Loader {
public:
    Loader(std::int64_t opset, std::string_view source) : source_(source), opset_(opset) {}

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

    // A node of the graph: its known outputs (specialize()) or a step; If expands (add_if).
    void add(const onnx::OnnxNode& node, std::vector<Step>& steps);
    void add_node(const onnx::OnnxNode& node, std::vector<Step>& steps);
    // A known condition inlines the branch it takes; else a step runs one of two branch programs.
    void add_if(const onnx::OnnxNode& node, std::vector<Step>& steps);
    void inline_branch(const onnx::OnnxNode& node, const onnx::OnnxGraph& branch, std::vector<Step>& steps);
    std::shared_ptr<OnnxProgram> branch_program(const onnx::OnnxGraph& branch, std::string_view which,
                                                const onnx::OnnxNode& node,
                                                const std::vector<std::pair<std::string, torch::Tensor>>& constants,
                                                const std::vector<onnx::OnnxValueInfo>& inputs) const;
    // Makes the node's outputs the given constants instead of running it; false if `known` lacks one.
    bool add_known(const onnx::OnnxNode& node, const std::unordered_map<std::string, torch::Tensor>& known);
    // Runs a step whose inputs are all constant once, now, making its outputs constants too.
    void fold(const Step& step);
    // Marks the slots the graph outputs read; fills `release` of each step.
    void schedule_releases(std::vector<Step>& steps, const std::vector<std::size_t>& output_slots) const;

    std::string source_;
    std::int64_t opset_;
    std::unordered_map<std::string, std::size_t> slots_;
    std::vector<torch::Tensor> constants_;  // per slot: the value when known at load, else undefined
    const std::unordered_map<std::string, torch::Tensor>* known_ = nullptr;  // specialize()'s values
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

void Loader::add(const onnx::OnnxNode& node, std::vector<Step>& steps) {
    if (known_ != nullptr && add_known(node, *known_)) return;
    if (node.op_type == "If" && (node.domain.empty() || node.domain == "ai.onnx")) {
        add_if(node, steps);
    } else {
        add_node(node, steps);
    }
}

void Loader::add_if(const onnx::OnnxNode& node, std::vector<Step>& steps) {
    Step step;
    step.label = fmt::format("{}: node '{}' ({})", source_, node.name, node.op_type);
    step.node = {node.name, node.op_type};
    const IfBranches branches = if_branches(node, step.label);
    const std::size_t condition = slot_of(node.inputs[0], fmt::format("node '{}'", node.name));
    if (constants_[condition].defined()) {
        bool taken = false;
        try {
            taken = condition_value(constants_[condition]);
        } catch (const std::exception& e) {
            throw UserError(fmt::format("{}: {}", step.label, e.what()));
        }
        inline_branch(node, taken ? *branches.then_graph : *branches.else_graph, steps);
        return;
    }
    // Outer values the branches read: constants go in as the branches' own, the rest as inputs.
    std::set<std::string> names;
    for (const onnx::OnnxGraph* graph : {branches.then_graph, branches.else_graph}) {
        for (std::string& name : outer_names(*graph)) names.insert(std::move(name));
    }
    std::vector<std::pair<std::string, torch::Tensor>> constants;
    std::vector<onnx::OnnxValueInfo> inputs;
    step.inputs.push_back(condition);
    for (const std::string& name : names) {
        const std::size_t slot = slot_of(name, fmt::format("a branch of node '{}'", node.name));
        if (constants_[slot].defined()) {
            constants.emplace_back(name, constants_[slot]);
        } else {
            step.inputs.push_back(slot);
            inputs.push_back({name, onnx::DataType::undefined, false, {}});
        }
    }
    step.kernel = make_if_kernel(branch_program(*branches.then_graph, "then_branch", node, constants, inputs),
                                 branch_program(*branches.else_graph, "else_branch", node, constants, inputs));
    for (const std::string& name : node.outputs) {
        step.outputs.push_back(name.empty() ? kAbsent : new_slot(name, fmt::format("output of node '{}'", node.name)));
    }
    steps.push_back(std::move(step));
}

void Loader::inline_branch(const onnx::OnnxNode& node, const onnx::OnnxGraph& branch, std::vector<Step>& steps) {
    for (const auto& init : branch.initializers) {
        constants_[new_slot(init.name, "initializer of a branch")] = to_torch(init, source_);
    }
    for (const onnx::OnnxNode& inner : branch.nodes) add(inner, steps);
    for (std::size_t k = 0; k < node.outputs.size(); ++k) {
        if (node.outputs[k].empty()) continue;
        add(onnx::OnnxNode{node.name, "Identity", "", {branch.outputs[k].name}, {node.outputs[k]}, {}}, steps);
    }
}

std::shared_ptr<OnnxProgram> Loader::branch_program(
    const onnx::OnnxGraph& branch, std::string_view which, const onnx::OnnxNode& node,
    const std::vector<std::pair<std::string, torch::Tensor>>& constants,
    const std::vector<onnx::OnnxValueInfo>& inputs) const {
    auto graph = std::make_shared<SourceGraph>();
    graph->source = fmt::format("{} ({} of node '{}')", source_, which, node.name);
    graph->opset = opset_;
    graph->nodes = branch.nodes;
    graph->initializers = constants;
    for (const auto& init : branch.initializers) graph->initializers.emplace_back(init.name, to_torch(init, source_));
    graph->inputs = inputs;
    graph->outputs = branch.outputs;
    return build_branch(std::move(graph));
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
    try {
        step.kernel = factory(NodeContext(node, opset_, std::move(constant_inputs), source_));
    } catch (const UserError&) {
        throw;
    } catch (const c10::Error& e) {  // LibTorch rejecting a constant input (a shape, a fill value)
        throw UserError(fmt::format("{}: {}", step.label, e.what_without_backtrace()));
    } catch (const std::exception& e) {
        throw UserError(fmt::format("{}: {}", step.label, e.what()));
    }
    for (const std::string& name : node.outputs) {
        step.outputs.push_back(name.empty() ? kAbsent : new_slot(name, fmt::format("output of node '{}'", node.name)));
    }
    if (all_constant) {
        fold(step);
    } else {
        steps.push_back(std::move(step));
    }
}

bool Loader::add_known(const onnx::OnnxNode& node, const std::unordered_map<std::string, torch::Tensor>& known) {
    if (node.outputs.empty()) return false;
    for (const std::string& name : node.outputs) {
        if (!name.empty() && !known.contains(name)) return false;
    }
    for (const std::string& name : node.outputs) {
        if (!name.empty()) constants_[new_slot(name, fmt::format("output of node '{}'", node.name))] = known.at(name);
    }
    return true;
}

// Computed in fp32 on the CPU; to() then converts the results like the weights.
void Loader::fold(const Step& step) {
    std::vector<torch::Tensor> in;
    for (const std::size_t slot : step.inputs) in.push_back(slot == kAbsent ? torch::Tensor() : constants_[slot]);
    std::vector<torch::Tensor> out(step.outputs.size());
    try {
        const torch::NoGradGuard no_grad;
        step.kernel(RunContext{}, in, out);
    } catch (const c10::Error& e) {
        throw UserError(
            fmt::format("{}: cannot compute this constant node: {}", step.label, e.what_without_backtrace()));
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

std::shared_ptr<OnnxProgram> build_branch(std::shared_ptr<const SourceGraph> graph) {
    auto program = std::make_shared<OnnxProgram>(OnnxProgram::build(std::move(graph), {}));
    program->branch_ = true;
    return program;
}

OnnxProgram::OnnxProgram() = default;
OnnxProgram::OnnxProgram(OnnxProgram&&) noexcept = default;
OnnxProgram& OnnxProgram::operator=(OnnxProgram&&) noexcept = default;
OnnxProgram::~OnnxProgram() = default;

OnnxProgram OnnxProgram::load(const std::filesystem::path& onnx_file, bool fuse) {
    return from_model(onnx::read_onnx_file(onnx_file), onnx_file.string(), fuse);
}

OnnxProgram OnnxProgram::from_model(const onnx::OnnxModel& model, std::string_view source_name, bool fuse) {
    auto graph = std::make_shared<SourceGraph>();
    graph->source = source_name;
    graph->opset = std::max<std::int64_t>(model.opset_version(), 1);
    FusedGraph fused = fuse ? fuse_graph(model) : FusedGraph{model.graph.nodes, {}};
    graph->nodes = std::move(fused.nodes);
    graph->fusion_counts = fused.counts;
    graph->fused = fuse;
    for (const auto& init : model.graph.initializers) {
        graph->initializers.emplace_back(init.name, to_torch(init, source_name));
    }
    graph->inputs = model.graph.inputs;
    graph->outputs = model.graph.outputs;
    return build(std::move(graph), {});
}

OnnxProgram OnnxProgram::build(std::shared_ptr<const SourceGraph> graph,
                               const std::vector<std::pair<std::string, torch::Tensor>>& known_values) {
    OnnxProgram program;
    program.source_ = graph->source;
    const std::unordered_map<std::string, torch::Tensor> known(known_values.begin(), known_values.end());
    Loader loader(graph->opset, graph->source);
    for (const auto& [name, value] : graph->initializers) {
        loader.constants_[loader.new_slot(name, "initializer")] = value;
    }
    for (const auto& input : graph->inputs) {
        if (loader.slots_.contains(input.name)) continue;  // an initializer listed as input (IR < 4)
        program.input_slots_.push_back(loader.new_slot(input.name, "graph input"));
        program.inputs_.push_back(input);
    }
    loader.known_ = &known;
    for (const auto& node : graph->nodes) loader.add(node, program.steps_);
    program.fusion_counts_ = graph->fusion_counts;
    for (const auto& output : graph->outputs) {
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
    program.slot_names_.resize(program.slot_count_);
    for (const auto& [name, slot] : loader.slots_) program.slot_names_[slot] = name;
    program.graph_ = std::move(graph);
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
            // Before specialize(), integers are shapes and indices that run() reads on the host;
            // after, what is left of them meets device tensors (indices, masks).
            converted.push_back(specialized() ? t.to(device) : t);
            continue;
        }
        torch::Tensor c = narrowed(t, float_type).to(device, float_type);
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
    // A branch's inputs are its caller's values: integers may stay on the host, like the caller's.
    if (branch_) return is_floating(tensor) ? tensor.to(float_type_) : tensor;
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

void OnnxProgram::check_inputs(const std::vector<torch::Tensor>& inputs) const {
    if (inputs.size() != input_slots_.size()) {
        throw std::invalid_argument(
            fmt::format("{}: {} inputs given, the model takes {}", source_, inputs.size(), input_slots_.size()));
    }
    for (std::size_t k = 0; k < specialized_shapes_.size(); ++k) {
        if (inputs[k].sizes() != c10::IntArrayRef(specialized_shapes_[k])) {
            throw std::invalid_argument(fmt::format("{}: input '{}' has shape {}; the program is specialized for {}",
                                                    source_, inputs_[k].name, fmt::join(inputs[k].sizes(), "x"),
                                                    fmt::join(specialized_shapes_[k], "x")));
        }
    }
}

std::vector<torch::Tensor> OnnxProgram::run(const std::vector<torch::Tensor>& inputs, StepObserver* observer) const {
    return execute(inputs, observer, nullptr, nullptr);
}

KnownValues OnnxProgram::scalar_constants() const {
    KnownValues scalars;
    for (std::size_t k = 0; k < constant_slots_.size(); ++k) {
        const torch::Tensor& value = file_constants_[k];
        if (value.numel() == 1 && is_floating(value)) scalars.emplace(slot_names_[constant_slots_[k]], value);
    }
    return scalars;
}

void OnnxProgram::specialize(const std::vector<torch::Tensor>& inputs) {
    const torch::Device device = device_;
    const torch::ScalarType float_type = float_type_;
    const bool channels_last = channels_last_;
    if (specialized()) {  // back to the general program, which takes any shape
        *this = build(graph_, {});
        to(device, float_type, channels_last);
    }
    check_inputs(inputs);
    std::vector<StepSlots> views;
    views.reserve(steps_.size());
    for (const Step& step : steps_) views.push_back({step.node.op_type, step.inputs, step.outputs});
    const std::vector<std::size_t> fixed = fixed_shape_outputs(slot_count_, constant_slots_, input_slots_, views);
    std::vector<bool> wanted(slot_count_, false);
    for (const std::size_t slot : fixed) wanted[slot] = true;
    std::vector<torch::Tensor> captured(slot_count_);
    if (!fixed.empty()) execute(inputs, nullptr, &wanted, &captured);
    std::vector<std::pair<std::string, torch::Tensor>> known;
    for (const std::size_t slot : fixed) known.emplace_back(slot_names_[slot], captured[slot].to(torch::kCPU));
    OnnxProgram specialized = build(graph_, known);
    // Scalars now computed from the shapes may complete a pattern: built again from the graph rewritten
    // with them. The general graph stays as it was, for the next specialize().
    if (graph_->fused) {
        FusedGraph more = fuse_specialized(graph_->nodes, graph_->outputs, graph_->opset, specialized.scalar_constants());
        if (more.nodes.size() != graph_->nodes.size()) {
            auto refit = std::make_shared<SourceGraph>(*graph_);
            refit->nodes = std::move(more.nodes);
            refit->fusion_counts += more.counts;
            specialized = build(std::move(refit), known);
            specialized.graph_ = graph_;
        }
    }
    for (const torch::Tensor& input : inputs) specialized.specialized_shapes_.push_back(input.sizes().vec());
    specialized.to(device, float_type, channels_last);
    *this = std::move(specialized);
}

std::vector<torch::Tensor> OnnxProgram::execute(const std::vector<torch::Tensor>& inputs, StepObserver* observer,
                                                const std::vector<bool>* wanted,
                                                std::vector<torch::Tensor>* captured) const {
    check_inputs(inputs);
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
            const std::size_t slot = step.outputs[k];
            if (slot == kAbsent) continue;
            if (wanted != nullptr && (*wanted)[slot]) (*captured)[slot] = out[k];
            values[slot] = std::move(out[k]);
        }
        for (const std::size_t slot : step.release) values[slot].reset();
    }
    std::vector<torch::Tensor> results;
    results.reserve(output_slots_.size());
    for (const std::size_t slot : output_slots_) results.push_back(values[slot]);
    return results;
}

}  // namespace inferbench::torch_onnx
