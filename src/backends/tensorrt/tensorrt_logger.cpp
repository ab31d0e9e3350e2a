#include "backends/tensorrt/tensorrt_logger.hpp"

#include <cstdio>

namespace inferbench {

void TensorRtLogger::log(Severity severity, nvinfer1::AsciiChar const* message) noexcept {
    if (severity != Severity::kINTERNAL_ERROR && severity != Severity::kERROR && severity != Severity::kWARNING) return;
    const bool error = severity != Severity::kWARNING;
    std::fprintf(stderr, "tensorrt: %s: %s\n", error ? "error" : "warning", message != nullptr ? message : "");
    if (!error) return;
    try {
        const std::lock_guard lock(mutex_);
        last_error_ = message != nullptr ? message : "";
    } catch (...) {
        // log() must not throw; the message is on stderr already.
    }
}

std::string TensorRtLogger::take_last_error() {
    const std::lock_guard lock(mutex_);
    std::string error = last_error_.empty() ? std::string("no message from TensorRT") : std::move(last_error_);
    last_error_.clear();
    return error;
}

}  // namespace inferbench
