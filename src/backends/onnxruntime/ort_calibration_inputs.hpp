// The batches an int8 calibration runs: seeded random inputs (backends/random_inputs, the generator and the
// seed a benchmark feeds), or the user's files (calibration_data), read as the plan's inputs are
// (backends/input_files: an .npz archive, an .npy file, a folder of NAME.npy or NAME_0.npy, NAME_1.npy, ... per
// model input, or of numbered samples), each batch at the batch size its file has. Random batches hold one sample where the model's batch dimension is dynamic (so that one
// int8 file serves every batch size, and batch 0 is what a batch-1 benchmark feeds), else the fixed batch.
// SDK-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "backends/onnxruntime/ort_precision_options.hpp"

namespace inferbench {

using CalibrationBatches = std::vector<std::vector<HostTensor>>;

struct CalibrationInputs {
    CalibrationBatches batches;  // each: one tensor per model input, in the model's order
    std::string identity;        // what the converted-model cache key says of them
};

// Throws UserError naming the file (or archive:member) whose shape or element type does not fit the input it
// is for, or the path where an input has no array or the inputs have different numbers of batches.
CalibrationInputs calibration_inputs(const std::filesystem::path& model, std::uint64_t seed,
                                     const OrtPrecisionOptions& options);

}  // namespace inferbench
