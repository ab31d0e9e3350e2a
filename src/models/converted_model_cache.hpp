// The cache of models inferbench converts itself (float16, int8 QDQ): a converted file is kept under a name
// that carries a digest of everything that makes the conversion differ (the source model's bytes, its
// external-data files included, and the conversion's settings), with that key written beside it and
// compared, byte for byte, before the file is reused; figures measured when it was made (the int8
// model's agreement with float32) are kept beside it too. SDK-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace inferbench::models {

struct ConvertedModelKey {
    std::string model_hash;  // source_model_hash()
    std::uint64_t model_size_bytes = 0;
    std::string conversion;  // "fp16", "int8", ...
    std::string settings;    // every setting of the conversion, as text
};

// "field=value" lines, led by the cache's format version.
std::string to_text(const ConvertedModelKey& key);

// The hash of the model file and of the external-data files beside it that PyTorch's exporter names after
// it (MODEL.onnx.data, ...), 16 hex digits: a model whose weights change in their own file gets a new key.
std::string source_model_hash(const std::filesystem::path& model);

struct ConvertedModelPaths {
    std::filesystem::path model;    // <stem>.<conversion>.<digest>.onnx
    std::filesystem::path key;      // .key
    std::filesystem::path figures;  // .figures: what was measured when it was made
};

ConvertedModelPaths converted_model_paths(const std::filesystem::path& dir, const std::filesystem::path& model,
                                          const ConvertedModelKey& key);
// <model cache>/converted, or a folder in the temporary directory when there is no model cache.
std::filesystem::path converted_model_dir(const std::string& model_cache_dir);

// The key file holds exactly `key` and the model is not empty: the cached file may be used. Its figures.
std::optional<std::string> cached_model_figures(const ConvertedModelPaths& paths, const ConvertedModelKey& key);
// The model, then its figures, then its key, so that an interrupted write leaves an entry that is redone.
// Throws EnvironmentError naming the file that cannot be written.
void write_cached_model(const ConvertedModelPaths& paths, const ConvertedModelKey& key, std::string_view model,
                        std::string_view figures);

}  // namespace inferbench::models
