// The trtexec backend: for users who have TensorRT's trtexec but not the SDK to build against.
// load() builds an engine from ONNX with trtexec (or takes an engine file) through the engine cache;
// run_own_loop() runs trtexec on it with --exportTimes and delivers every measured query. trtexec
// makes its own random inputs, so inputs() is empty and prepare() has nothing to copy.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/trtexec/trtexec_options.hpp"

namespace inferbench::trtexec {

// The configured path if it is executable, else trtexec on PATH, else /usr/src/tensorrt/bin/trtexec.
std::optional<std::filesystem::path> find_trtexec(const TrtexecOptions& options);

class TrtexecBackend final : public Backend {
public:
    std::string name() const override { return "trtexec"; }
    std::string version() const override { return tensorrt_version_; }
    Capabilities capabilities() const override;
    std::vector<BackendOption> options() const override { return trtexec_option_list(); }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override;

    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> /*inputs*/) override {}
    void infer(DeviceTimes& times) override;
    OwnLoopReport run_own_loop(const LoopSettings& settings, IterationSink& sink) override;

    const std::filesystem::path& engine_path() const { return engine_path_; }
    bool engine_was_cached() const { return engine_was_cached_; }

private:
    void build_engine(const std::string& model_path, const BenchmarkSpec& spec);

    TrtexecOptions options_;
    std::filesystem::path trtexec_;
    std::string tensorrt_version_;
    std::filesystem::path engine_path_;
    bool engine_was_cached_ = false;
    std::string shapes_;  // --shapes for the run; empty for fixed shapes
    int device_ = 0;
};

std::unique_ptr<Backend> make_trtexec_backend();

}  // namespace inferbench::trtexec
