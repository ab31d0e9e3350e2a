// The ONNX Runtime backend: runs an .onnx file through ONNX Runtime's C++ API on the CPU execution
// provider, or on a GPU through the CUDA or TensorRT one (ort_gpu_provider, ort_cuda_execution), with the
// ONNX Runtime library ort_runtime opens. Built into the module libinferbench_backend_onnxruntime.so;
// tests construct it directly.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/onnxruntime_options.hpp"
#include "backends/onnxruntime/ort_cuda_execution.hpp"
#include "backends/onnxruntime/ort_generation.hpp"
#include "backends/onnxruntime/ort_runtime.hpp"

namespace inferbench {

class OnnxRuntimeBackend final : public Backend {
public:
    // Opens the default ONNX Runtime (ort_runtime); throws EnvironmentError when there is none, or when it
    // is older than the headers built against. A cell's option runtime may name another at load().
    OnnxRuntimeBackend();
    ~OnnxRuntimeBackend() override;
    OnnxRuntimeBackend(const OnnxRuntimeBackend&) = delete;
    OnnxRuntimeBackend& operator=(const OnnxRuntimeBackend&) = delete;

    std::string name() const override { return "onnxruntime"; }
    std::string version() const override;
    Capabilities capabilities() const override;
    std::vector<BackendOption> options() const override;
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override;

    // fp16 and int8: the converted model (ort_model_conversion.hpp); fp32: the model as it is.
    ConvertedModel convert_model(const std::string& model_path, const BenchmarkSpec& spec) override;
    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override { return inputs_; }
    void prepare(std::span<const HostTensor> inputs) override;
    void stage_inputs(std::span<const HostTensor> inputs) override;
    // On the CUDA execution: a device-to-device copy into the bound input buffers (the pipeline's GPU batch never
    // goes through the host); false on the CPU provider or for tensors on another GPU.
    bool stage_device_inputs(std::span<const DeviceTensor> inputs) override;
    // On the CUDA execution: the bound output buffers; empty on the CPU provider.
    std::vector<DeviceTensor> last_device_outputs() const override;
    void infer(DeviceTimes& times) override;
    // With layer_profile N > 0: a second session of the same options with ONNX Runtime's profiler on runs
    // one warm-up and N iterations on the prepared inputs; its profile (a temporary file, deleted) gives
    // each node's op type, provider, calls and total time. The measured session never profiles. On a
    // GPU N is at least 1: the providers of the nodes are the cell's placement (CPU fallbacks shown).
    // On a GPU the profiled runs synchronise and are timed with CUDA events too; the GPU nodes' times are
    // then the host's dispatch of their kernels (LayerTime::host_dispatch), and measured_metrics() holds ONNX
    // Runtime's own time per run beside the events over the same runs.
    std::vector<LayerTime> profile_layers(const std::atomic<std::int32_t>& stop) override;
    std::vector<BackendMetric> measured_metrics() const override { return profile_metrics_; }

    std::vector<HostTensor> last_outputs() const override;

    // A generative cell's load() reads the ONNX decoder (ort_generation): its file as it is, of the cell's
    // precision (fp32, or fp16 on a GPU).
    DecoderInfo decoder_info() const override;
    void prepare_generation(const GenerationRequest& request) override;
    void generate(TokenSink& sink) override;

    // The outputs of the last infer(), in host memory (copied back from a GPU); for tests and result checks.
    std::vector<Ort::Value> outputs() const;

private:
    struct ProfiledRuns {
        std::string file;                    // ONNX Runtime's profile
        std::vector<std::int64_t> event_ns;  // GPU: CUDA events around each profiled Run, in order
        bool stopped = false;                // Ctrl-C: nothing to keep
    };
    ProfiledRuns profile_on_cpu(const std::filesystem::path& folder, std::int64_t runs,
                                const std::atomic<std::int32_t>& stop);
    ProfiledRuns profile_on_gpu(const std::filesystem::path& folder, std::int64_t runs,
                                const std::atomic<std::int32_t>& stop);
    void reset();
    void read_model_io(std::int64_t batch_size);
    void load_decoder(const BenchmarkSpec& spec);

    const OrtRuntime* runtime_;  // kept for the process (ort_runtime)
    std::string model_path_;
    OnnxRuntimeOptions options_;
    Device device_;
    // On a GPU: the stream, buffers and events, and where the provider's device tensors live. reset()
    // releases its binding before the session and its stream after it.
    std::unique_ptr<OrtCudaExecution> cuda_;
    const OrtMemoryInfo* device_memory_ = nullptr;
    Ort::Session session_{nullptr};
    std::vector<TensorInfo> inputs_;
    std::vector<std::string> output_names_;
    // prepare() copies the inputs once into these, so infer() does not depend on the caller's buffers.
    std::vector<std::vector<std::byte>> input_buffers_;
    std::vector<Ort::Value> input_values_;
    Ort::IoBinding binding_{nullptr};
    Ort::RunOptions run_options_{nullptr};
    std::vector<BackendMetric> profile_metrics_;  // of the last profile_layers()
    std::unique_ptr<OrtGeneration> generation_;   // a generative cell's; refers to session_
};

std::unique_ptr<Backend> make_onnxruntime_backend();

}  // namespace inferbench
