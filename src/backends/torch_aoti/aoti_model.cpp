#include "backends/torch_aoti/aoti_model.hpp"

#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include "core/units.hpp"

namespace inferbench {
namespace {

constexpr std::size_t kErrorLineBytes = 400;

class AotiModel final : public TorchModel {
public:
    AotiModel(const std::string& path, const AotiModelConfig& config)
        : loader_(make_loader(path, config)), inputs_(config.inputs) {}

    std::vector<TensorInfo> inputs() const override { return inputs_; }

    // On a GPU the loader runs on the current CUDA stream (torch_cuda sets its own).
    std::vector<torch::Tensor> forward(const std::vector<torch::Tensor>& inputs) override { return loader_->run(inputs); }

private:
    static std::unique_ptr<torch::inductor::AOTIModelPackageLoader> make_loader(const std::string& path,
                                                                                const AotiModelConfig& config) {
#if INFERBENCH_AOTI_DEVICE_INDEX
        return std::make_unique<torch::inductor::AOTIModelPackageLoader>(
            path, "model", config.run_single_threaded, /*num_runners=*/1,
            static_cast<c10::DeviceIndex>(config.device_index));
#else
        // A loader without a device index runs on the current device (the backend sets it).
        return std::make_unique<torch::inductor::AOTIModelPackageLoader>(path, "model", config.run_single_threaded);
#endif
    }

    std::unique_ptr<torch::inductor::AOTIModelPackageLoader> loader_;
    std::vector<TensorInfo> inputs_;
};

}  // namespace

std::unique_ptr<TorchModel> load_aoti_model(const std::string& path, const AotiModelConfig& config) {
    return std::make_unique<AotiModel>(path, config);
}

std::string torch_error_line(const c10::Error& error) {
    const std::string_view text = error.what_without_backtrace();
    std::string_view rest = text;
    while (!rest.empty()) {
        const auto newline = rest.find('\n');
        const std::string_view line = trim(rest.substr(0, newline));
        if (!line.empty()) return std::string(line.substr(0, kErrorLineBytes));
        if (newline == std::string_view::npos) break;
        rest.remove_prefix(newline + 1);
    }
    return "LibTorch gave an error without a message";
}

}  // namespace inferbench
