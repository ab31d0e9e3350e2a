// Builds a serialized TensorRT engine from an ONNX file: the ONNX parser, an optimisation profile that
// fixes the batch size (min = opt = max), the precision's builder flags, an int8 calibrator, and a
// timing cache file shared by every build on the same GPU model and TensorRT version.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/tensorrt/tensorrt_logger.hpp"
#include "backends/tensorrt/tensorrt_options.hpp"
#include "backends/tensorrt/tensorrt_platform.hpp"

namespace inferbench {

struct EngineBuildRequest {
    std::string model_path;
    std::int64_t batch_size = 1;
    PrecisionPlan precision;
    TensorRtOptions options;
    std::filesystem::path timing_cache;
    std::uint64_t seed = 0;  // random int8 calibration batches
};

// Throws runtime_error with the ONNX parser's or TensorRT's own messages; UserError for bad calibration data.
std::vector<char> build_engine(const EngineBuildRequest& request, TensorRtLogger& logger);

}  // namespace inferbench
