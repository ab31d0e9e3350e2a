// The int8 entropy calibrator: feeds TensorRT's builder the batches of a CalibrationData, copied to the
// device one at a time. Implicit (calibrated) int8 is deprecated since TensorRT 10.1 in favour of
// explicit Q/DQ quantization, but it remains the way to quantize a model that has no Q/DQ nodes on
// TensorRT 10. TensorRT 11 removed it (int8 comes from a Q/DQ file, tensorrt_typed_onnx.hpp): declared
// for TensorRT 10 and older only.
#pragma once

#include <NvInfer.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/tensorrt/tensorrt_calibration_data.hpp"
#include "backends/tensorrt/tensorrt_cuda.hpp"

#if NV_TENSORRT_MAJOR < 11

namespace inferbench {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // IInt8EntropyCalibrator2 (TensorRT 10.1+)

class EntropyCalibrator final : public nvinfer1::IInt8EntropyCalibrator2 {
public:
    explicit EntropyCalibrator(CalibrationData data);

    // Explicit-batch networks carry the batch in the input shapes: TensorRT wants 1 here.
    std::int32_t getBatchSize() const noexcept override { return 1; }
    bool getBatch(void* bindings[], char const* names[], std::int32_t nbBindings) noexcept override;
    // No calibration table is kept: the engine cache, keyed by the calibration data, spares the rebuild
    // a table would shorten.
    void const* readCalibrationCache(std::size_t& length) noexcept override;
    void writeCalibrationCache(void const* cache, std::size_t length) noexcept override;

    // Why getBatch() last returned false before the data ran out (TensorRT only sees false).
    const std::string& error() const { return error_; }
    std::size_t batches_given() const { return next_; }

private:
    void copy_batch(void* bindings[], char const* names[], std::int32_t count);

    CalibrationData data_;
    std::vector<CudaBuffer> device_;  // one per input
    std::size_t next_ = 0;
    std::string error_;
};

// Hands the calibrator (and the profile its shapes come from, if the network has one) to the config.
void attach_calibrator(nvinfer1::IBuilderConfig& config, EntropyCalibrator& calibrator,
                       nvinfer1::IOptimizationProfile const* profile);

#pragma GCC diagnostic pop

}  // namespace inferbench

#endif  // NV_TENSORRT_MAJOR < 11
