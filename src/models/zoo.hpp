// The zoo: reference networks the tool can write itself, as ONNX with seeded random weights, so a
// benchmark needs no download and every machine runs byte-identical models.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "models/onnx_reader.hpp"

namespace inferbench::models {

struct ZooModel {
    std::string name;
    std::string description;
    std::string source;  // paper/reference
    // Expected trainable parameters: weights, biases, BN gamma and beta; not BN running
    // statistics (as torchvision's model.parameters() and TF's trainable variables count).
    std::int64_t parameters;
};

// How to build a zoo model where not as published. The input size: the same layers, channels,
// heads and weights, only the spatial size or the sequence length change, for tests that cannot
// afford the published sizes on a small machine (the cross-backend check; exported files always
// have the published sizes); 0 keeps the published size. The batch: see export_onnx().
struct ZooOptions {
    // The side of the square input image; of the cubic input volume for 3d-unet. Each
    // architecture has its own constraints (a multiple of 32 for the YOLOs and 3d-unet, >= 385 for
    // ssd-resnet34, 224 * k for Swin with window 7), checked by its builder.
    std::int64_t image_size = 0;
    std::int64_t sequence_length = 0;  // tokens; BERT only
    // 0 keeps the symbolic batch dimension ("batch") of every input and output; N > 0 fixes it to N.
    std::int64_t batch = 0;
};

const std::vector<ZooModel>& zoo();                     // includes "null" (no file; for the null backend)
const ZooModel* find_zoo_model(std::string_view name);  // nullptr if unknown
std::vector<std::string> zoo_names();

// Writes the model as ONNX into cache_dir (created if missing) unless an identical export is
// already there; returns its path. `batch` 0: a symbolic batch dimension; N > 0: N fixed on every
// input and output. The file name encodes the name, the generator version, the seed and a fixed
// batch. Writes to a temp file then renames, so concurrent or aborted exports never leave a half
// file. Throws inferbench::UserError for unknown names (and for "null", which has no file) and
// a negative batch, EnvironmentError for I/O errors.
std::filesystem::path export_onnx(std::string_view name, const std::filesystem::path& cache_dir,
                                  std::uint64_t seed, std::int64_t batch = 0);
// The same at a reduced input size (ZooOptions: the same layers and weights, another image side or
// sequence length; the file name and the model's metadata say which). Throws UserError for a size the
// architecture cannot take, as for the names.
std::filesystem::path export_onnx(std::string_view name, const std::filesystem::path& cache_dir,
                                  std::uint64_t seed, const ZooOptions& options);

// The bytes export_onnx() writes (batch symbolic), built in memory, for reading a model without
// a file. The same errors as export_onnx() for names.
std::string zoo_model_bytes(std::string_view name, std::uint64_t seed);

struct ReadModel {
    onnx::OnnxModel model;
    std::int64_t file_bytes = 0;  // of the file, or of the zoo model's bytes
};
// A zoo model name (as `run --model` takes them, before paths) built in memory at its published
// size, as the file export_onnx() writes: no file, no cache. Anything else is read as an ONNX file;
// one that cannot be read throws UserError.
ReadModel read_zoo_or_file(const std::string& name_or_path, std::uint64_t seed);

}  // namespace inferbench::models
