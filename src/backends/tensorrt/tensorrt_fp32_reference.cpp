#include "backends/tensorrt/tensorrt_fp32_reference.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench {

TensorRtFp32Reference::TensorRtFp32Reference(nvinfer1::IRuntime& runtime, TensorRtLogger& logger,
                                             EngineBuildRequest build, std::string identity)
    : runtime_(runtime), logger_(logger), build_(std::move(build)), identity_(std::move(identity)) {
    build_.precision = PrecisionPlan{};  // fp32: every flag cleared, TF32 included
    build_.options.cuda_graph = false;
    build_.options.device_resident = false;
}

void TensorRtFp32Reference::build_for(const std::filesystem::path& model) {
    if (execution_ && built_for_ == model) return;
    execution_.reset();
    build_.model_path = model.string();
    const std::vector<char> bytes = build_engine(build_, logger_);
    std::unique_ptr<nvinfer1::ICudaEngine> engine(runtime_.deserializeCudaEngine(bytes.data(), bytes.size()));
    if (!engine)
        throw std::runtime_error("TensorRT cannot load the fp32 calibration engine it just built: " +
                                 logger_.take_last_error());
    execution_ = std::make_unique<TensorRtExecution>(std::move(engine), build_.batch_size, build_.options,
                                                     build_.model_path, logger_);
    built_for_ = model;
}

std::vector<std::vector<float>> TensorRtFp32Reference::run(const std::filesystem::path& model,
                                                           std::span<const HostTensor> batch,
                                                           std::span<const std::string> outputs) {
    build_for(model);
    execution_->prepare(batch);
    DeviceTimes times;
    execution_->infer(times);
    const std::vector<HostTensor> produced = execution_->outputs();
    std::vector<std::vector<float>> values;
    for (const std::string& name : outputs) {
        const auto found =
            std::find_if(produced.begin(), produced.end(), [&](const HostTensor& t) { return t.info.name == name; });
        if (found == produced.end())
            throw std::runtime_error(
                fmt::format("the fp32 calibration engine of {} has no output {}", model.string(), name));
        std::vector<float> v;
        if (found->info.dtype == DType::f32) {
            v.resize(found->data.size() / sizeof(float));
            std::memcpy(v.data(), found->data.data(), v.size() * sizeof(float));
        }
        values.push_back(std::move(v));
    }
    return values;
}

}  // namespace inferbench
