// Inputs from the user's files in place of seeded random ones (the plan's `inputs`), as trtexec's --loadInputs
// and perf_analyzer's --input-data: real data for models whose work depends on it (NMS, early exit, MoE routing).
// SDK-free; every backend the harness drives gets them through prepare(), as it gets random inputs.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// One set of tensors per sample, each one per model input in the model's order.
using InputSamples = std::vector<std::vector<HostTensor>>;

// The samples at `path` for the model inputs `inputs` (their shapes at the cell's batch size):
// - an .npz archive (numpy.savez) with one array per input name: one sample;
// - an .npy file, for a model of one input: one sample;
// - a folder of NAME.npy per input: one sample; or of NAME_0.npy, NAME_1.npy, ... per input (int8
//   calibration_data's layout): one sample per index;
// - a folder of numbered entries, 0, 1, 2, ... (subfolders of NAME.npy, .npz archives, or for a model of one
//   input .npy files): one sample each, in number order.
// Throws UserError naming the file and the input where an array's shape or element type does not fit the
// input, an input has no array, or the path holds none of these.
InputSamples read_input_samples(const std::filesystem::path& path, const std::vector<TensorInfo>& inputs);

// Checks one array read for input `input` (an index into the names given) from `source` (the file, or
// "archive.npz:NAME.npy") and returns the tensor to feed, or throws UserError naming `source` and the input.
using FitArray = std::function<HostTensor(HostTensor array, std::size_t input, const std::string& source)>;

// The same layouts, for inputs known by name, each array checked by `fit` (read_input_samples checks the
// cell's shapes; int8 calibration takes each file's batch); `setting` names the path in the errors
// ("calibration_data x: ..."). Where NAME_0.npy, ... are not as many for every input, refused naming both.
InputSamples read_input_files(const std::filesystem::path& path, const std::string& setting,
                              const std::vector<std::string>& names, const FitArray& fit);

}  // namespace inferbench
