// The zoo: reference networks the tool can write itself, as ONNX with seeded random weights, so a
// benchmark needs no download and every machine runs byte-identical models.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::models {

struct ZooModel {
    std::string name;
    std::string description;
    std::string source;  // paper/reference
    // Expected trainable parameters: weights, biases, BN gamma and beta; not BN running
    // statistics (as torchvision's model.parameters() and TF's trainable variables count).
    std::int64_t parameters;
};

const std::vector<ZooModel>& zoo();                     // includes "null" (no file; for the null backend)
const ZooModel* find_zoo_model(std::string_view name);  // nullptr if unknown
std::vector<std::string> zoo_names();

// Writes the model as ONNX with a dynamic batch dimension into cache_dir (created if missing)
// unless an identical export is already there; returns its path. The file name encodes the name,
// the generator version and the seed. Writes to a temp file then renames, so concurrent or
// aborted exports never leave a half file. Throws inferbench::UserError for unknown names (and
// for "null", which has no file), EnvironmentError for I/O errors.
std::filesystem::path export_onnx(std::string_view name, const std::filesystem::path& cache_dir,
                                  std::uint64_t seed);

}  // namespace inferbench::models
