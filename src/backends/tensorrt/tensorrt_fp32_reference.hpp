// The float32 reference an int8 or fp8 Q/DQ file for TensorRT 11 is calibrated on (tensorrt_typed_onnx.hpp):
// the float32 model, with the activations to calibrate as extra outputs, built into an fp32 TensorRT engine
// (no precision flag, TF32 off) and run on each calibration batch on the benchmark's GPU. The engine is built
// once per model file and kept for the batches that follow.
#pragma once

#include <NvInfer.h>

#include <filesystem>
#include <memory>
#include <string>

#include "backends/tensorrt/tensorrt_engine_builder.hpp"
#include "backends/tensorrt/tensorrt_execution.hpp"
#include "backends/tensorrt/tensorrt_logger.hpp"
#include "backends/tensorrt/tensorrt_typed_onnx.hpp"

namespace inferbench {

class TensorRtFp32Reference final : public Fp32Reference {
public:
    // `runtime` and `logger` must outlive the reference; `build` gives the batch, options and timing cache of
    // the benchmark (its model path and precision are replaced).
    TensorRtFp32Reference(nvinfer1::IRuntime& runtime, TensorRtLogger& logger, EngineBuildRequest build,
                          std::string identity);

    std::string identity() const override { return identity_; }
    std::vector<std::vector<float>> run(const std::filesystem::path& model, std::span<const HostTensor> batch,
                                        std::span<const std::string> outputs) override;

private:
    void build_for(const std::filesystem::path& model);

    nvinfer1::IRuntime& runtime_;
    TensorRtLogger& logger_;
    EngineBuildRequest build_;
    std::string identity_;
    std::filesystem::path built_for_;
    std::unique_ptr<TensorRtExecution> execution_;
};

}  // namespace inferbench
