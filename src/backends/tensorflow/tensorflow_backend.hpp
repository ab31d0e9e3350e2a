// The TensorFlow backend: a frozen GraphDef (.pb) or a SavedModel (its folder, or its saved_model.pb)
// run with TF_SessionRun through TensorFlow's C API, on the CPU or, with a GPU build of the library, a
// GPU. The graph's own precision only. Built into libinferbench_backend_tensorflow.so where the
// TensorFlow C library is found; the tests build it against a fake libtensorflow.
#pragma once

#include <tensorflow/c/c_api.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/tensorflow/tensorflow_api.hpp"
#include "backends/tensorflow/tensorflow_options.hpp"

namespace inferbench {

// The devices a TensorFlow session sees.
struct TfDevices {
    int gpus = 0;
    std::string listing;  // "CPU:0, GPU:0"
    std::string problem;  // why the devices could not be listed
};

class TensorFlowBackend final : public Backend {
public:
    std::string name() const override { return "tensorflow"; }
    std::string version() const override { return TF_Version(); }
    Capabilities capabilities() const override;
    std::vector<BackendOption> options() const override { return tensorflow_option_list(); }
    std::optional<std::string> unsupported_reason(const BenchmarkSpec& spec) const override;

    void load(const std::string& model_path, const BenchmarkSpec& spec) override;
    std::vector<TensorInfo> inputs() const override { return inputs_; }
    void prepare(std::span<const HostTensor> inputs) override;
    void infer(DeviceTimes& times) override;

    // The fetched tensors of the last infer(), owned by the backend; for tests and result checks.
    std::vector<const TF_Tensor*> outputs() const;

private:
    // Listed once per backend: from the loaded session, else from a probe session that takes no GPU memory.
    const TfDevices& devices() const;
    void reset();
    void open_frozen_graph(const std::string& path, const TF_SessionOptions& options);
    void open_saved_model(const std::filesystem::path& dir, const TF_SessionOptions& options,
                          const std::vector<std::string>& tags);
    void resolve_inputs(const std::vector<TensorName>& names, std::int64_t batch);
    void resolve_outputs(const std::vector<TensorName>& names);
    TF_Output find_tensor(const TensorName& name, std::string_view option) const;
    std::vector<std::string> feed_nodes() const;  // nodes of op type Placeholder: the graph's inputs
    std::vector<std::string> unconsumed_nodes() const;

    mutable std::optional<TfDevices> devices_;
    std::string model_path_;
    // Declared in destruction order: tensors, then the session, then the graph.
    TfGraph graph_;
    TfSession session_;
    std::vector<TensorInfo> inputs_;
    std::vector<TF_Output> input_ports_;
    std::vector<TF_Output> output_ports_;
    std::vector<TfTensor> input_values_;
    std::vector<TfTensor> output_values_;
    // TF_SessionRun's arrays, kept so that infer() allocates nothing of its own.
    std::vector<TF_Tensor*> input_raw_;
    std::vector<TF_Tensor*> output_raw_;
    TfStatus run_status_;
};

std::unique_ptr<Backend> make_tensorflow_backend();

}  // namespace inferbench
