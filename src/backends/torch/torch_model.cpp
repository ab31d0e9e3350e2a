#include "backends/torch/torch_model.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>
#include <variant>

#include <fmt/format.h>
#include <torch/script.h>

#include "backends/batch_shape.hpp"
#include "backends/onnx_dtype.hpp"
#include "backends/torch/onnx_interpreter/onnx_program.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

std::vector<std::int64_t> parse_dims(const std::string& text, const std::string& path) {
    std::vector<std::int64_t> dims;
    std::string item;
    for (std::size_t start = 0; start <= text.size();) {
        const auto x = text.find('x', start);
        const auto value = parse_int(text.substr(start, x == std::string::npos ? std::string::npos : x - start));
        if (!value || *value < 1)
            throw UserError(
                fmt::format("torch option input_shape '{}' for {}: write dims without the batch, e.g. "
                            "3x224x224",
                            text, path));
        dims.push_back(*value);
        if (x == std::string::npos) break;
        start = x + 1;
    }
    return dims;
}

void flatten_outputs(const c10::IValue& value, std::vector<torch::Tensor>& out) {
    if (value.isTensor()) {
        out.push_back(value.toTensor());
    } else if (value.isTuple()) {
        for (const auto& element : value.toTupleRef().elements()) flatten_outputs(element, out);
    } else if (value.isList()) {
        for (const auto& element : value.toListRef()) flatten_outputs(element, out);
    } else if (value.isGenericDict()) {
        for (const auto& entry : value.toGenericDict()) flatten_outputs(entry.value(), out);
    }
}

class ScriptModel final : public TorchModel {
public:
    ScriptModel(const std::string& path, const TorchModelConfig& config) {
        if (config.input_shape.empty())
            throw UserError(
                fmt::format("{}: a TorchScript file does not declare its inputs; set "
                            "backend_options.torch.input_shape (dims without the batch, e.g. 3x224x224)",
                            path));
        std::vector<std::int64_t> shape = {config.batch_size};
        for (auto d : parse_dims(config.input_shape, path)) shape.push_back(d);
        inputs_.push_back(TensorInfo{"input", DType::f32, shape});
        try {
            module_ = torch::jit::load(path, config.device);
        } catch (const c10::Error& e) {
            throw std::runtime_error(
                fmt::format("cannot load TorchScript model {}: {}", path, e.what_without_backtrace()));
        }
        module_.eval();
        if (config.float_type != torch::kFloat) module_.to(config.float_type);
    }
    std::vector<TensorInfo> inputs() const override { return inputs_; }
    std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs) override {
        std::vector<c10::IValue> arguments(inputs.begin(), inputs.end());
        std::vector<torch::Tensor> outputs;
        flatten_outputs(module_.forward(arguments), outputs);
        return outputs;
    }

private:
    torch::jit::Module module_;
    std::vector<TensorInfo> inputs_;
};

DType dtype_of(models::onnx::DataType type, const std::string& input, const std::string& path) {
    if (const auto dtype = inferbench::dtype_of(type)) return *dtype;
    throw UserError(fmt::format("{}: input {} has ONNX element type {}, which inferbench cannot generate", path, input,
                                static_cast<int>(type)));
}

TensorInfo resolve_input(const models::onnx::OnnxValueInfo& input, std::int64_t batch_size, const std::string& path) {
    return {input.name, dtype_of(input.elem_type, input.name, path),
            resolve_batch_shape(declared_shape(input), batch_size, path, input.name)};
}

class InterpretedOnnxModel final : public TorchModel {
public:
    InterpretedOnnxModel(const std::string& path, const TorchModelConfig& config)
        : program_(torch_onnx::OnnxProgram::load(path)) {
        // One line per load, so a run's log says which of the exporter's decomposed layers run as one kernel.
        if (program_.fusion_counts().total() > 0) {
            fmt::print(stderr, "torch: {}: {}\n", std::filesystem::path(path).filename().string(),
                       program_.fusion_counts().summary());
        }
        program_.to(config.device, config.float_type, config.channels_last);
        for (const auto& input : program_.inputs()) inputs_.push_back(resolve_input(input, config.batch_size, path));
    }
    std::vector<TensorInfo> inputs() const override { return inputs_; }
    std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs) override {
        return program_.run(inputs);
    }
    void specialize(const std::vector<torch::Tensor>& inputs) override { program_.specialize(inputs); }
    const torch_onnx::OnnxProgram* program() const override { return &program_; }
    std::vector<std::string> output_names() const override {
        std::vector<std::string> names;
        for (const auto& output : program_.outputs()) names.push_back(output.name);
        return names;
    }

private:
    torch_onnx::OnnxProgram program_;
    std::vector<TensorInfo> inputs_;
};

}  // namespace

void check_cuda_graph_capturable(const TorchModel& model, const std::string& model_path) {
    const torch_onnx::OnnxProgram* program = model.program();
    if (program == nullptr) return;  // TorchScript: LibTorch's own capture errors
    const std::vector<torch_onnx::ProgramNode> nodes = program->nodes();
    // An If first: behind it the rest of a detection head's data-dependent nodes wait too.
    for (const std::string_view op : {"If", "NonZero", "NonMaxSuppression"}) {
        const auto it = std::ranges::find_if(nodes, [op](const auto& n) { return n.op_type == op; });
        if (it == nodes.end()) continue;
        const char* why = op == "If" ? "picks its branch from a value computed at run time"
                                     : "gives an output whose size depends on the data";
        throw UserError(fmt::format(
            "torch: {}: node '{}' ({}) {}, which a CUDA graph cannot capture; set "
            "backend_options.torch.cuda_graph=false to run this model on CUDA without a graph",
            model_path, it->name, it->op_type, why));
    }
}

std::unique_ptr<TorchModel> load_torch_model(const std::string& path, const TorchModelConfig& config) {
    if (!std::filesystem::is_regular_file(path)) throw UserError(fmt::format("model file {} not found", path));
    if (std::filesystem::path(path).extension() == ".onnx") return std::make_unique<InterpretedOnnxModel>(path, config);
    return std::make_unique<ScriptModel>(path, config);
}

}  // namespace inferbench
