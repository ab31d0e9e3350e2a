// The trtexec backend: for users who have TensorRT's trtexec but not the SDK to build against.
// load() builds an engine from ONNX with trtexec (or takes an engine file) through the engine cache;
// run_own_loop() runs trtexec on it with --exportTimes and delivers every measured query. trtexec
// makes its own random inputs, so inputs() is empty and prepare() has nothing to copy; where the plan gives
// input files, prepare() reads them (backends/input_files, against the ONNX model's inputs at the cell's
// batch) and run_own_loop() hands trtexec the first sample through --loadInputs: trtexec takes one file per
// input and feeds it to every iteration, so further samples are not cycled (prepared_metrics says so).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/backend.hpp"
#include "backends/trtexec/trtexec_options.hpp"

namespace inferbench::trtexec {

// The configured path if it is executable, else trtexec on PATH, else /usr/src/tensorrt/bin/trtexec.
std::optional<std::filesystem::path> find_trtexec(const TrtexecOptions& options);

class TrtexecBackend final : public Backend {
public:
    std::string name() const override { return "trtexec"; }
    // The TensorRT version the loaded trtexec prints; before load(), that of trtexec on PATH (or the default
    // location), for `list backends`; empty when there is none.
    std::string version() const override;
    Capabilities capabilities() const override;
    std::vector<BackendOption> options() const override { return trtexec_option_list(); }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override;

    // TensorRT 11: the precision-typed ONNX file (tensorrt_typed_onnx), or why the cell is skipped; older
    // versions and engine files run the model as it is.
    ConvertedModel convert_model(const std::string& model_path, const BenchmarkSpec& spec) override;
    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor> inputs) override;
    void infer(DeviceTimes& times) override;
    OwnLoopReport run_own_loop(const LoopSettings& settings, IterationSink& sink) override;
    // For the plan's input files: the samples read and that they were not cycled (core/metrics/harness_metrics).
    std::vector<BackendMetric> prepared_metrics() const override;

    const std::filesystem::path& engine_path() const { return engine_path_; }
    bool engine_was_cached() const { return engine_was_cached_; }

private:
    void build_engine(const std::string& model_path, const BenchmarkSpec& spec);
    std::string file_to_build(const std::string& model_path, const BenchmarkSpec& spec) const;
    // The raw files of the first sample in `dir`, as --loadInputs takes them.
    std::vector<std::pair<std::string, std::string>> write_input_files(const std::filesystem::path& dir) const;

    TrtexecOptions options_;
    std::filesystem::path trtexec_;
    std::string tensorrt_version_;
    std::filesystem::path engine_path_;
    bool engine_was_cached_ = false;
    std::string shapes_;  // --shapes for the run; empty for fixed shapes
    int device_ = 0;
    std::filesystem::path inputs_path_;      // the plan's inputs; empty: trtexec's random ones
    std::vector<TensorInfo> input_infos_;    // the ONNX model's inputs at the cell's batch, for them
    std::vector<HostTensor> first_sample_;   // what --loadInputs feeds
    std::int64_t input_samples_ = 0;         // the samples the files hold
};

std::unique_ptr<Backend> make_trtexec_backend();

}  // namespace inferbench::trtexec
