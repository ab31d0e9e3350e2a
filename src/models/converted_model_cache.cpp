#include "models/converted_model_cache.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

#include <fmt/format.h>

#include "core/file_hash.hpp"
#include "core/file_io.hpp"
#include "core/fnv1a.hpp"

namespace inferbench::models {
namespace {

// Bumped when inferbench changes how it converts models, which the key cannot see.
constexpr std::string_view kCacheFormat = "inferbench-converted-model 1";

std::optional<std::string> read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string file_stem_slug(const std::filesystem::path& model) {
    std::string out;
    for (const char c : model.stem().string()) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '_' || c == '-') out += c;
        else if (!out.empty() && out.back() != '-') out += '-';
    }
    return out.empty() ? "model" : out;
}

}  // namespace

std::string to_text(const ConvertedModelKey& key) {
    return fmt::format("format={}\nmodel_hash={}\nmodel_size_bytes={}\nconversion={}\nsettings={}\n", kCacheFormat,
                       key.model_hash, key.model_size_bytes, key.conversion, key.settings);
}

std::string source_model_hash(const std::filesystem::path& model) {
    std::string text = fmt::format("{:016x}", hash_file_contents(model));
    std::vector<std::filesystem::path> external;
    std::error_code ec;
    const std::string prefix = model.filename().string() + ".";
    for (const auto& entry : std::filesystem::directory_iterator(model.parent_path().empty() ? "." : model.parent_path(), ec))
        if (entry.is_regular_file(ec) && entry.path().filename().string().starts_with(prefix))
            external.push_back(entry.path());
    std::sort(external.begin(), external.end());
    for (const auto& file : external)
        text += fmt::format(" {}={:016x}", file.filename().string(), hash_file_contents(file));
    return fmt::format("{:016x}", fnv1a64(text));
}

ConvertedModelPaths converted_model_paths(const std::filesystem::path& dir, const std::filesystem::path& model,
                                          const ConvertedModelKey& key) {
    const std::string stem =
        fmt::format("{}.{}.{:016x}", file_stem_slug(model), key.conversion, fnv1a64(to_text(key)));
    return {dir / (stem + ".onnx"), dir / (stem + ".key"), dir / (stem + ".figures")};
}

std::filesystem::path converted_model_dir(const std::string& model_cache_dir) {
    if (!model_cache_dir.empty()) return std::filesystem::path(model_cache_dir) / "converted";
    return std::filesystem::temp_directory_path() / "inferbench-converted";
}

std::optional<std::string> cached_model_figures(const ConvertedModelPaths& paths, const ConvertedModelKey& key) {
    const auto stored = read_text(paths.key);
    if (!stored || *stored != to_text(key)) return std::nullopt;
    std::error_code ec;
    if (std::filesystem::file_size(paths.model, ec) == 0 || ec) return std::nullopt;
    return read_text(paths.figures).value_or("");
}

void write_cached_model(const ConvertedModelPaths& paths, const ConvertedModelKey& key, std::string_view model,
                        std::string_view figures) {
    std::error_code ec;
    std::filesystem::create_directories(paths.model.parent_path(), ec);
    std::filesystem::remove(paths.key, ec);  // until the new model is complete, the entry is invalid
    write_file_atomically(paths.model, model);
    write_file_atomically(paths.figures, figures);
    write_file_atomically(paths.key, to_text(key));
}

}  // namespace inferbench::models
