#include <torch/csrc/inductor/aoti_package/model_package_loader.h>

#include <c10/util/Exception.h>
#include <torch/torch.h>

#include <fstream>
#include <sstream>

#include "fake_aoti_control.hpp"

namespace fake_aoti {
namespace {
Calls state;
}
Calls calls() { return state; }
void reset() { state = Calls{}; }
}  // namespace fake_aoti

namespace torch::inductor {
namespace {

struct Input {
    std::string name;
    at::ScalarType dtype = at::kFloat;
    std::vector<std::int64_t> dims;  // -1: dynamic
};

at::ScalarType dtype_of(const std::string& name) {
    if (name == "float16") return at::kHalf;
    if (name == "bfloat16") return at::kBFloat16;
    if (name == "int64") return at::kLong;  // token ids and masks
    TORCH_CHECK(name == "float32", "fake package: unknown dtype ", name);
    return at::kFloat;
}

std::vector<std::int64_t> dims_of(const std::string& text) {
    std::vector<std::int64_t> dims;
    std::stringstream items(text);
    for (std::string item; std::getline(items, item, ',');) dims.push_back(item == "?" ? -1 : std::stoll(item));
    return dims;
}

}  // namespace

struct AOTIModelPackageLoader::Package {
    std::string device = "cpu";
    double scale = 1;
    std::vector<Input> inputs;
    std::string fail_run;
};

AOTIModelPackageLoader::AOTIModelPackageLoader(const std::string& model_package_path, const std::string& model_name,
                                               const bool run_single_threaded, const size_t num_runners,
                                               const c10::DeviceIndex device_index)
    : package_(std::make_unique<Package>()) {
    TORCH_CHECK(num_runners == 1, "fake loader: one runner only");
    std::ifstream in(model_package_path);
    std::string line;
    TORCH_CHECK(in && std::getline(in, line) && line == "fake-pt2",
                "PytorchStreamReader failed reading zip archive: failed finding central directory\n"
                "Exception raised from valid at fake_model_package_loader.cpp (most recent call first):\nframe #0: ...");
    while (std::getline(in, line)) {
        std::istringstream words(line);
        std::string key;
        words >> key;
        std::string rest;
        std::getline(words >> std::ws, rest);
        if (key == "device") package_->device = rest;
        if (key == "scale") package_->scale = std::stod(rest);
        if (key == "fail_run") package_->fail_run = rest;
        TORCH_CHECK(key != "fail_load", rest);
        if (key == "input") {
            std::istringstream fields(rest);
            Input input;
            std::string dtype, dims;
            fields >> input.name >> dtype >> dims;
            input.dtype = dtype_of(dtype);
            input.dims = dims_of(dims);
            package_->inputs.push_back(input);
        }
    }
    ++fake_aoti::state.loaders_alive;
    fake_aoti::state.last_run_single_threaded = run_single_threaded;
    fake_aoti::state.last_device_index = device_index;
    fake_aoti::state.last_model_name = model_name;
    fake_aoti::state.last_path = model_package_path;
}

AOTIModelPackageLoader::~AOTIModelPackageLoader() { --fake_aoti::state.loaders_alive; }

std::unordered_map<std::string, std::string> AOTIModelPackageLoader::get_metadata() {
    return {{"AOTI_DEVICE_KEY", package_->device}};
}

std::vector<std::string> AOTIModelPackageLoader::get_call_spec() { return {"[1, {}]", "[1, {}]"}; }

std::vector<at::Tensor> AOTIModelPackageLoader::run(const std::vector<at::Tensor>& inputs, void* /*stream_handle*/) {
    TORCH_CHECK(package_->fail_run.empty(), package_->fail_run);
    TORCH_CHECK(inputs.size() == package_->inputs.size(), "expected ", package_->inputs.size(), " inputs, got ",
                inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
        const Input& declared = package_->inputs[i];
        TORCH_CHECK(inputs[i].scalar_type() == declared.dtype, "input ", declared.name, ": expected dtype ",
                    declared.dtype, ", got ", inputs[i].scalar_type());
        TORCH_CHECK(inputs[i].dim() == static_cast<std::int64_t>(declared.dims.size()), "input ", declared.name,
                    ": wrong rank");
        for (std::size_t d = 0; d < declared.dims.size(); ++d)
            TORCH_CHECK(declared.dims[d] < 0 || declared.dims[d] == inputs[i].size(static_cast<std::int64_t>(d)),
                        "input ", declared.name, ": dimension ", d, " must be ", declared.dims[d]);
    }
    ++fake_aoti::state.runs;
    return {inputs.at(0) * package_->scale};
}

}  // namespace torch::inductor
