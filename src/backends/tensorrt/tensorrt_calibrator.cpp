#include "backends/tensorrt/tensorrt_calibrator.hpp"

#if NV_TENSORRT_MAJOR < 11

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace inferbench {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // the int8 calibrator API (TensorRT 10.1+)

EntropyCalibrator::EntropyCalibrator(CalibrationData data) : data_(std::move(data)) {
    device_.reserve(data_.inputs().size());
    for (const TensorInfo& input : data_.inputs()) device_.emplace_back(CudaBuffer::Kind::device, input.byte_size());
}

bool EntropyCalibrator::getBatch(void* bindings[], char const* names[], std::int32_t nbBindings) noexcept {
    if (next_ >= data_.batch_count()) return false;
    try {
        copy_batch(bindings, names, nbBindings);
        ++next_;
        return true;
    } catch (const std::exception& e) {
        error_ = fmt::format("int8 calibration batch {}: {}", next_, e.what());
        return false;
    }
}

void EntropyCalibrator::copy_batch(void* bindings[], char const* names[], std::int32_t count) {
    const std::vector<HostTensor> batch = data_.batch(next_);
    const auto& inputs = data_.inputs();
    for (std::int32_t b = 0; b < count; ++b) {
        const std::string_view name = names[b];
        const auto found = std::find_if(inputs.begin(), inputs.end(), [&](const TensorInfo& t) { return t.name == name; });
        if (found == inputs.end()) throw std::runtime_error(fmt::format("TensorRT asks for unknown input {}", name));
        const auto i = static_cast<std::size_t>(found - inputs.begin());
        check_cuda(cudaMemcpy(device_[i].data(), batch[i].data.data(), batch[i].data.size(), cudaMemcpyHostToDevice),
                   fmt::format("copying calibration input {} to the device", name));
        bindings[b] = device_[i].data();
    }
}

void const* EntropyCalibrator::readCalibrationCache(std::size_t& length) noexcept {
    length = 0;
    return nullptr;
}

void EntropyCalibrator::writeCalibrationCache(void const* /*cache*/, std::size_t /*length*/) noexcept {}

void attach_calibrator(nvinfer1::IBuilderConfig& config, EntropyCalibrator& calibrator,
                       nvinfer1::IOptimizationProfile const* profile) {
    config.setInt8Calibrator(&calibrator);
    if (profile != nullptr && !config.setCalibrationProfile(profile))
        throw std::runtime_error("TensorRT refused the batch optimisation profile as the int8 calibration profile");
}

#pragma GCC diagnostic pop

}  // namespace inferbench

#endif  // NV_TENSORRT_MAJOR < 11
