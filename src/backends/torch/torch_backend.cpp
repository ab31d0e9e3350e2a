#include "backends/torch/torch_backend.hpp"

#include <ATen/autocast_mode.h>
#include <filesystem>
#include <fmt/format.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "backends/options.hpp"
#include "backends/torch/layer_profile.hpp"
#include "backends/torch/torch_decoder.hpp"
#include "backends/torch/torch_execution.hpp"
#include "backends/torch/torch_model.hpp"
#include "backends/torch/torch_options.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"

#if INFERBENCH_TORCH_CUDA
#include "backends/torch/torch_cuda.hpp"  // the per-node step clock of layer_profile
#endif

namespace inferbench {
namespace {

// Whether this LibTorch has fp16 convolutions on the CPU (1.13 has not; newer releases have).
bool cpu_half_convolution() {
    static const bool supported = [] {
        try {
            c10::InferenceMode guard;
            torch::conv2d(torch::ones({1, 1, 3, 3}, torch::kHalf), torch::ones({1, 1, 1, 1}, torch::kHalf));
            return true;
        } catch (const std::exception&) {
            return false;
        }
    }();
    return supported;
}

torch::ScalarType float_type(Precision precision) {
    switch (precision) {
        case Precision::fp16:
            return torch::kHalf;
        case Precision::bf16:
            return torch::kBFloat16;
        default:
            return torch::kFloat;
    }
}

void enable_autocast(torch::ScalarType type, bool cuda) {
#if TORCH_VERSION_MAJOR >= 2
    const auto device_type = cuda ? at::kCUDA : at::kCPU;
    at::autocast::set_autocast_enabled(device_type, true);
    at::autocast::set_autocast_dtype(device_type, type);
#else
    if (cuda) {
        at::autocast::set_enabled(true);
        at::autocast::set_autocast_gpu_dtype(type);
    } else {
        at::autocast::set_cpu_enabled(true);
        at::autocast::set_autocast_cpu_dtype(type);
    }
#endif
}

// Host tensors of the harness's inputs, in the dtype and layout the model will run in.
std::vector<torch::Tensor> host_tensors(std::span<const HostTensor> inputs, torch::ScalarType run_type,
                                        bool channels_last) {
    std::vector<torch::Tensor> tensors;
    for (const auto& input : inputs) {
        auto tensor = to_torch_tensor(input);
        if (tensor.is_floating_point()) tensor = tensor.to(run_type);
        if (channels_last && tensor.dim() == 4) tensor = tensor.contiguous(torch::MemoryFormat::ChannelsLast);
        tensors.push_back(tensor);
    }
    return tensors;
}

class TorchBackend final : public Backend {
public:
    std::string name() const override { return "torch"; }
    std::string version() const override { return libtorch_version(); }
    Capabilities capabilities() const override {
        Capabilities caps = libtorch_capabilities();
        caps.model_formats = {"onnx", "pt", "pth", "ts"};
        caps.concurrent_instances = true;  // a model each, on its own stream from the pool on a GPU
        caps.generates = true;             // an ONNX decoder with the KV cache as inputs and outputs (torch_decoder)
        caps.stages_inputs = true;         // a copy into the tensors prepare() made (pinned ones on a GPU)
        return caps;
    }
    std::vector<BackendOption> options() const override { return torch_option_list(); }

    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (spec.device.kind == DeviceKind::cuda && !libtorch_cuda_available())
            return fmt::format(
                "this LibTorch {} has no CUDA (or no GPU is visible); build the torch module against a "
                "CUDA LibTorch",
                version());
        if (auto reason = Backend::unsupported_reason(spec)) return reason;
        const TorchOptions options = parse_torch_options(spec.backend_options);
        if (spec.generation.active()) return generation_problem(spec, options);
        const bool cpu = spec.device.kind == DeviceKind::cpu;
        if (cpu && spec.precision == Precision::fp16 && !options.autocast && !cpu_half_convolution())
            return fmt::format("LibTorch {} has no fp16 convolution on the CPU; use bf16 on the CPU", version());
        return cuda_only_options_problem(spec, options.cuda_graph, options.device_resident);
    }

    void load(const std::string& model_path, const BenchmarkSpec& spec) override {
        options_ = parse_torch_options(spec.backend_options);
        cuda_ = spec.device.kind == DeviceKind::cuda;
        set_intra_op_threads(options_.threads);
        run_type_ = float_type(spec.precision);
        TorchModelConfig config;
        config.device = cuda_ ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(spec.device.index))
                              : torch::Device(torch::kCPU);
        config.float_type = options_.autocast ? torch::kFloat : run_type_;
        config.channels_last = options_.channels_last;
        config.batch_size = spec.batch_size;
        config.input_shape = options_.input_shape;
        device_index_ = spec.device.index;
        if (cuda_) {
            at::globalContext().setBenchmarkCuDNN(options_.cudnn_benchmark);
            at::globalContext().setAllowTF32CuBLAS(options_.tf32_matmul);
        }
        c10::InferenceMode guard;
        decoder_.reset();
        if (spec.generation.active()) {
            decoder_ = std::make_unique<TorchDecoder>(model_path, config.device, run_type_);
            return;
        }
        model_ = load_torch_model(model_path, config);
        model_path_ = model_path;
        if (options_.layer_profile > 0 && !model_->program())
            throw UserError(fmt::format(
                "torch option layer_profile: per-layer times need an ONNX model (run node by node by the "
                "interpreter); {} is TorchScript, which runs as one graph",
                model_path));
    }

    std::vector<TensorInfo> inputs() const override { return model_->inputs(); }

    void prepare(std::span<const HostTensor> inputs) override {
        if (options_.autocast && run_type_ != torch::kFloat) enable_autocast(run_type_, cuda_);
        c10::InferenceMode guard;
        host_inputs_ = host_tensors(inputs, options_.autocast ? torch::kFloat : run_type_, options_.channels_last);
        // Before any capture: a CUDA graph must not replay host-side shape arithmetic.
        model_->specialize(host_inputs_);
        if (cuda_ && options_.cuda_graph) check_cuda_graph_capturable(*model_, model_path_);
        execution_.prepare(*model_, host_inputs_,
                           TorchRunConfig{cuda_, device_index_, options_.cuda_graph, options_.device_resident});
    }

    void stage_inputs(std::span<const HostTensor> inputs) override {
        c10::InferenceMode guard;
        execution_.stage_inputs(host_tensors(inputs, options_.autocast ? torch::kFloat : run_type_, options_.channels_last));
    }

    void infer(DeviceTimes& times) override {
        c10::InferenceMode guard;
        execution_.infer(*model_, times);
    }

    std::vector<HostTensor> last_outputs() const override {
        if (options_.device_resident) throw_outputs_stay_on_device("torch");
        return to_host_tensors(execution_.outputs(), model_->output_names());
    }

    std::vector<LayerTime> profile_layers(const std::atomic<std::int32_t>& stop) override {
        if (options_.layer_profile == 0) return {};
        const torch_onnx::OnnxProgram& program = *model_->program();  // checked at load
        c10::InferenceMode guard;
#if INFERBENCH_TORCH_CUDA
        if (cuda_) {
            const torch::Device device(torch::kCUDA, static_cast<c10::DeviceIndex>(device_index_));
            std::vector<torch::Tensor> device_inputs;
            for (const auto& input : host_inputs_) device_inputs.push_back(input.to(device));
            const auto clock = make_cuda_step_clock(device_index_);
            return profile_program(program, device_inputs, options_.layer_profile, stop, *clock, "LibTorch CUDA");
        }
#endif
        const auto clock = make_cpu_step_clock();
        return profile_program(program, host_inputs_, options_.layer_profile, stop, *clock, "LibTorch CPU");
    }

    DecoderInfo decoder_info() const override { return loaded_decoder().info(); }
    void prepare_generation(const GenerationRequest& request) override { loaded_decoder().prepare(request); }
    void generate(TokenSink& sink) override { loaded_decoder().generate(sink); }

private:
    TorchDecoder& loaded_decoder() const {
        if (!decoder_) throw UserError("the torch backend generates with an ONNX decoder loaded for a generative cell");
        return *decoder_;
    }

    // A generative cell runs an ONNX decoder step by step, without the options that shape one inference.
    static std::optional<std::string> generation_problem(const BenchmarkSpec& spec, const TorchOptions& options) {
        if (std::filesystem::path(spec.model).extension() != ".onnx" && !models::find_decoder_model(spec.model))
            return std::string("generation on the torch backend needs an ONNX decoder with past_key_values inputs");
        if (options.cuda_graph || options.autocast || options.layer_profile > 0 || options.device_resident)
            return std::string("torch options cuda_graph, precision_mode=autocast, layer_profile and device_resident "
                               "apply to single inferences, not to generation; leave them unset for generative cells");
        return std::nullopt;
    }

    TorchOptions options_;
    bool cuda_ = false;
    int device_index_ = 0;
    torch::ScalarType run_type_ = torch::kFloat;
    std::unique_ptr<TorchModel> model_;
    std::string model_path_;
    std::vector<torch::Tensor> host_inputs_;
    TorchExecution execution_;
    std::unique_ptr<TorchDecoder> decoder_;  // a generative cell's model
};

}  // namespace

std::unique_ptr<Backend> make_torch_backend() { return std::make_unique<TorchBackend>(); }

}  // namespace inferbench
