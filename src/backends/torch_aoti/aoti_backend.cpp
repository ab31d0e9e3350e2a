#include "backends/torch_aoti/aoti_backend.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "backends/torch/torch_execution.hpp"
#include "backends/torch/torch_tensors.hpp"
#include "backends/torch_aoti/aoti_model.hpp"
#include "backends/torch_aoti/aoti_options.hpp"
#include "backends/torch_aoti/aoti_package.hpp"
#include "core/error.hpp"

#if INFERBENCH_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#endif

namespace inferbench {
namespace {

// What a package that fails to load or run most often is: one made elsewhere.
constexpr std::string_view kForeignPackageHint =
    "a package runs only on the kind of GPU (or CPU) and the PyTorch version it was compiled for: give the model's "
    "source (a zoo name or a spec) so that inferbench compiles it here";

class TorchAotiBackend final : public Backend {
public:
    std::string name() const override { return std::string(kTorchAotiBackend); }
    std::string version() const override { return libtorch_version(); }
    Capabilities capabilities() const override {
        Capabilities caps = libtorch_capabilities();
        caps.model_formats = {"pt2"};
        caps.builds_zoo_models = true;  // the exporter makes the package from the zoo's nn.Module
        return caps;
    }
    std::vector<BackendOption> options() const override { return aoti_option_list(); }

    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override {
        if (spec.device.kind == DeviceKind::cuda && !libtorch_cuda_available())
            return fmt::format(
                "this LibTorch {} has no CUDA (or no GPU is visible); build the torch-aoti module against PyTorch's "
                "CUDA LibTorch (scripts/setup.sh picks it where python3 has PyTorch with CUDA)",
                version());
        if (auto reason = Backend::unsupported_reason(spec)) return reason;
        return aoti_device_problem(parse_aoti_options(spec.backend_options), spec);
    }

    // The exporter compiles the package (or finds it in the cache) before the timed load.
    ConvertedModel convert_model(const std::string& model_path, const BenchmarkSpec& spec) override {
        const AotiOptions options = parse_aoti_options(spec.backend_options);
        const external::ExportOutcome outcome =
            external::run_torch_export(aoti_export_request(model_path, spec, options),
                                       {options.python, export_timeout_ns(spec.timeout_ns)});
        if (outcome.model) {
            if (auto problem = version_problem(*outcome.model, version(), options.python)) throw UserError(*problem);
            exported_ = *outcome.model;
            std::fprintf(stderr, "torch-aoti: %s: %s\n", exported_->path.c_str(),
                         exported_->cache_hit ? "from the cache"
                                              : fmt::format("compiled in {:.1f} s", exported_->seconds).c_str());
        }
        return converted_package(outcome);
    }

    void load(const std::string& model_path, const BenchmarkSpec& spec) override {
        options_ = parse_aoti_options(spec.backend_options);
        // `models check` loads without converting first.
        if (!exported_ || exported_->path != model_path) {
            const ConvertedModel converted = convert_model(model_path, spec);
            if (!converted.skip_reason.empty()) throw EnvironmentError(converted.skip_reason);
        }
        cuda_ = spec.device.kind == DeviceKind::cuda;
        device_index_ = spec.device.index;
        inputs_ = package_inputs(*exported_, spec.batch_size);
        set_intra_op_threads(options_.threads);
        AotiModelConfig config;
        config.device_index = cuda_ ? device_index_ : -1;
        config.run_single_threaded = options_.cuda_graph;
        config.inputs = inputs_;
        try {
#if INFERBENCH_TORCH_CUDA
            std::optional<c10::cuda::CUDAGuard> device_guard;
            if (cuda_) device_guard.emplace(static_cast<c10::DeviceIndex>(device_index_));
#endif
            model_ = load_aoti_model(exported_->path, config);
        } catch (const c10::Error& e) {
            throw EnvironmentError(fmt::format("torch-aoti cannot load {}: {}; {}", exported_->path, torch_error_line(e),
                                               kForeignPackageHint));
        }
    }

    std::vector<TensorInfo> inputs() const override { return inputs_; }

    void prepare(std::span<const HostTensor> inputs) override {
        c10::InferenceMode guard;
        std::vector<torch::Tensor> host_inputs;
        for (const auto& input : inputs) host_inputs.push_back(to_torch_tensor(input));
        translate_errors("run", [&] { prepare_execution(host_inputs); });
    }

    void infer(DeviceTimes& times) override {
        c10::InferenceMode guard;
        translate_errors("run", [&] { execution_.infer(*model_, times); });
    }

    std::vector<HostTensor> last_outputs() const override {
        if (options_.device_resident) throw_outputs_stay_on_device(kTorchAotiBackend);
        return to_host_tensors(execution_.outputs(), {});
    }

    std::vector<BackendMetric> prepared_metrics() const override {
        if (!graph_fallback_) return {};
        return {cuda_graph_fallback_metric()};
    }

private:
    // LibTorch's errors (with their C++ backtraces) as one line that names the package.
    template <typename Run>
    void translate_errors(std::string_view what, Run run) {
        try {
            run();
        } catch (const c10::Error& e) {
            throw EnvironmentError(fmt::format("torch-aoti could not {} {}: {}; {}", what, exported_->path,
                                               torch_error_line(e), kForeignPackageHint));
        }
    }

    // The CUDA graph where asked for; a package whose run cannot be captured runs without one, and says so.
    void prepare_execution(const std::vector<torch::Tensor>& host_inputs) {
        TorchRunConfig config{cuda_, device_index_, options_.cuda_graph, options_.device_resident};
        try {
            execution_.prepare(*model_, host_inputs, config);
        } catch (const c10::Error& e) {
            if (!config.cuda || !config.cuda_graph) throw;
            std::fprintf(stderr, "torch-aoti: %s could not be captured in a CUDA graph (%s); measuring it without one\n",
                         exported_->path.c_str(), torch_error_line(e).c_str());
            graph_fallback_ = true;
            config.cuda_graph = false;
            execution_.prepare(*model_, host_inputs, config);
        }
    }

    AotiOptions options_;
    std::optional<external::ExportedModel> exported_;
    bool cuda_ = false;
    int device_index_ = 0;
    bool graph_fallback_ = false;
    std::vector<TensorInfo> inputs_;
    std::unique_ptr<TorchModel> model_;
    TorchExecution execution_;
};

}  // namespace

std::unique_ptr<Backend> make_torch_aoti_backend() { return std::make_unique<TorchAotiBackend>(); }

}  // namespace inferbench
