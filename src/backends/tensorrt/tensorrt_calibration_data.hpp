// The input batches an int8 calibrator feeds TensorRT: seeded random data, or raw files from a folder.
// SDK-free; the calibrator copies batch() to the device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

inline constexpr std::size_t kRandomCalibrationBatches = 4;

class CalibrationData {
public:
    // Seeded random batches of the inputs' shapes: TensorRT gets a valid engine whose accuracy means nothing.
    static CalibrationData random(std::vector<TensorInfo> inputs, std::uint64_t seed,
                                  std::size_t batches = kRandomCalibrationBatches);
    // The *.bin files of `dir` sorted by name and taken inputs.size() at a time, in input order: each file
    // holds one input's raw bytes (its element type, at the benchmark's batch size). Throws UserError
    // naming the folder or the file and the size expected.
    static CalibrationData from_dir(std::vector<TensorInfo> inputs, const std::filesystem::path& dir);

    const std::vector<TensorInfo>& inputs() const { return inputs_; }
    std::size_t batch_count() const { return batches_; }
    // Batch `index` of every input, in input order; read or generated on demand.
    std::vector<HostTensor> batch(std::size_t index) const;

private:
    std::vector<TensorInfo> inputs_;
    std::size_t batches_ = 0;
    std::uint64_t seed_ = 0;
    std::vector<std::filesystem::path> files_;  // from_dir: input i of batch b is files_[b * inputs + i]
};

// The *.bin files of a calibration folder, sorted by name. Throws UserError when there are none.
std::vector<std::filesystem::path> calibration_files(const std::filesystem::path& dir);
// What identifies the calibration data in the engine key: the seed, or the folder's files by name, size
// and modification time (hashing their contents could take longer than calibrating on them).
std::string calibration_identity(const std::string& dir, std::uint64_t seed);

// Seeded random contents of one tensor: floats uniform in [-1, 1), integers in [0, 100), bools 0 or 1.
std::vector<std::byte> random_tensor_bytes(const TensorInfo& info, std::uint64_t seed);
// IEEE half, round to nearest even; magnitudes below 2^-14 become zero (calibration data needs no subnormals).
std::uint16_t float_to_half(float value);
std::uint16_t float_to_bfloat16(float value);  // round to nearest even

}  // namespace inferbench
