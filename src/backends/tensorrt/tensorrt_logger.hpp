// TensorRT's log, kept: warnings and errors go to stderr (the worker's last output lines are stored
// with a failed benchmark), and the last error is kept for the exception that reports the failure.
#pragma once

#include <NvInfer.h>

#include <mutex>
#include <string>

namespace inferbench {

class TensorRtLogger final : public nvinfer1::ILogger {
public:
    void log(Severity severity, nvinfer1::AsciiChar const* message) noexcept override;

    // The last error TensorRT logged, or "no message from TensorRT"; cleared by take_last_error().
    std::string take_last_error();

private:
    std::mutex mutex_;  // the builder may log from its own threads
    std::string last_error_;
};

}  // namespace inferbench
