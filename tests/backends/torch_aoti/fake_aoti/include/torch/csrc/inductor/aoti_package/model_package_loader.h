// A fake of LibTorch's AOTIModelPackageLoader (torch/csrc/inductor/aoti_package/model_package_loader.h, LibTorch
// >= 2.6) for LibTorch 1.13, which has none: the members the torch-aoti backend calls, with the real
// signatures, over the text packages the fake exporter writes (tests/backends/external/fakes/torch_export:
// `fake-pt2`, `device D`, `scale S`, `input NAME DTYPE DIMS`, `fail_load MESSAGE`, `fail_run MESSAGE`).
// Like the real one it throws c10::Error where it cannot load or run.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

namespace torch::inductor {

class AOTIModelPackageLoader {
public:
    AOTIModelPackageLoader(const std::string& model_package_path, const std::string& model_name = "model",
                           const bool run_single_threaded = false, const size_t num_runners = 1,
                           const c10::DeviceIndex device_index = -1);
    ~AOTIModelPackageLoader();

    std::unordered_map<std::string, std::string> get_metadata();
    std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs, void* stream_handle = nullptr);
    std::vector<std::string> get_call_spec();

private:
    struct Package;
    std::unique_ptr<Package> package_;
};

}  // namespace torch::inductor
