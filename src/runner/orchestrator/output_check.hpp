// `models check`: one model run once by a backend under test and once by a reference backend, on the
// same seeded inputs (the ones a benchmark of that seed feeds), and their outputs compared
// (backends/output_agreement). In this process, not in a worker: it measures nothing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/output_agreement.hpp"
#include "core/spec.hpp"

namespace inferbench::runner {

struct OutputCheckSide {
    std::string backend;
    Device device;
    Precision precision = Precision::fp32;
    OptionMap backend_options;
};

struct OutputCheckRequest {
    std::string model;  // a file, or a zoo model name
    std::int64_t batch_size = 1;
    std::uint64_t seed = 0;
    std::string model_cache_dir;
    OutputCheckSide checked;
    OutputCheckSide reference;
};

struct OutputCheckResult {
    std::string checked_version;    // "torch 2.11.0"
    std::string reference_version;  // "onnxruntime 1.30.0"
    std::vector<TensorInfo> inputs;
    std::vector<OutputAgreement> outputs;
    // The tensors themselves, for `models check --save`.
    std::vector<HostTensor> input_tensors;
    std::vector<HostTensor> reference_outputs;
    std::vector<HostTensor> checked_outputs;
};

// Throws UserError when a side cannot run the model here (the reason `run` would skip it with) or
// the two sides declare different inputs.
OutputCheckResult check_outputs(const OutputCheckRequest& request);

}  // namespace inferbench::runner
