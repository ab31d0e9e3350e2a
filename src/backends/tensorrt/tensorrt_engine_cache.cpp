#include "backends/tensorrt/tensorrt_engine_cache.hpp"

#include <unistd.h>

#include <array>
#include <cctype>
#include <fstream>
#include <random>
#include <stdexcept>

#include <fmt/format.h>

#include "core/file_hash.hpp"
#include "core/fnv1a.hpp"

namespace inferbench {
namespace {

// Bumped when inferbench changes how it builds engines (flags, profiles), which the key cannot see.
constexpr std::string_view kCacheFormat = "inferbench-tensorrt-engine 1";

std::string compute_capability_text(ComputeCapability cc) {
    return cc.value() == 0 ? std::string("unknown") : fmt::format("{}.{}", cc.major, cc.minor);
}

// ".sm89", or nothing where the compute capability is not known.
std::string sm_part(ComputeCapability cc) { return cc.value() == 0 ? std::string() : fmt::format(".sm{}", cc.value()); }

}  // namespace

std::string to_text(const EngineKey& key) {
    return fmt::format(
        "format={}\nmodel_hash={}\nmodel_size_bytes={}\nprecision={}\nbatch_size={}\ngpu={}\ncompute_capability={}\n"
        "tensorrt_version={}\nbuild_settings={}\n",
        kCacheFormat, key.model_hash, key.model_size_bytes, to_string(key.precision), key.batch_size, key.gpu_name,
        compute_capability_text(key.compute_capability), key.tensorrt_version, key.build_settings);
}

std::string build_settings_text(const TensorRtOptions& options, const BuildFlags& flags, std::string_view calibration) {
    std::string text = fmt::format("flags={} workspace_mb={} builder_optimization_level={}", to_string(flags),
                                   options.workspace_mb, options.builder_optimization_level);
    if (!calibration.empty()) text += fmt::format(" calibration=[{}]", calibration);
    return text;
}

EngineCachePaths engine_cache_paths(const std::filesystem::path& dir, const std::string& model_path, const EngineKey& key) {
    const std::string text = to_text(key);
    const std::string stem =
        fmt::format("{}.{}.b{}.{}{}.trt{}.{}", slug(std::filesystem::path(model_path).stem().string()),
                    to_string(key.precision), key.batch_size, slug(key.gpu_name), sm_part(key.compute_capability),
                    slug(key.tensorrt_version), hex64(fnv1a64(text)));
    return {dir / (stem + ".engine"), dir / (stem + ".key")};
}

std::filesystem::path timing_cache_path(const std::filesystem::path& dir, std::string_view gpu_name,
                                        ComputeCapability cc, std::string_view tensorrt_version) {
    return dir / fmt::format("timing.{}{}.trt{}.cache", slug(gpu_name), sm_part(cc), slug(tensorrt_version));
}

std::filesystem::path resolve_cache_dir(const std::string& option, const std::string& model_cache_dir) {
    if (!option.empty()) return option;
    if (!model_cache_dir.empty()) return std::filesystem::path(model_cache_dir) / "tensorrt";
    return std::filesystem::temp_directory_path() / "inferbench-tensorrt";
}

std::string hex64(std::uint64_t value) { return fmt::format("{:016x}", value); }

std::string hash_file(const std::filesystem::path& path) { return hex64(hash_file_contents(path)); }

std::string slug(std::string_view text) {
    std::string out;
    for (char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u)) out += static_cast<char>(std::tolower(u));
        else if (!out.empty() && out.back() != '-') out += '-';
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? "unnamed" : out;
}

std::optional<std::vector<char>> read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return std::nullopt;
    const std::streamoff size = in.tellg();
    if (size < 0) return std::nullopt;
    std::vector<char> bytes(static_cast<std::size_t>(size));
    in.seekg(0);
    if (!in.read(bytes.data(), size)) return std::nullopt;
    return bytes;
}

void write_file_atomically(const std::filesystem::path& path, std::span<const char> bytes) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    const std::filesystem::path temporary =
        path.string() + fmt::format(".tmp-{}-{}", ::getpid(), std::random_device{}());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) {
            std::filesystem::remove(temporary, ec);
            throw std::runtime_error(fmt::format("cannot write {}", temporary.string()));
        }
    }
    std::filesystem::rename(temporary, path, ec);
    if (ec) {
        std::filesystem::remove(temporary, ec);
        throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), ec.message()));
    }
}

bool cached_engine_matches(const EngineCachePaths& paths, const EngineKey& key) {
    const auto stored_key = read_file(paths.key);
    if (!stored_key || std::string_view(stored_key->data(), stored_key->size()) != to_text(key)) return false;
    std::error_code ec;
    const auto size = std::filesystem::file_size(paths.engine, ec);
    return !ec && size > 0;
}

std::optional<std::vector<char>> read_cached_engine(const EngineCachePaths& paths, const EngineKey& key) {
    if (!cached_engine_matches(paths, key)) return std::nullopt;
    auto engine = read_file(paths.engine);
    if (!engine || engine->empty()) return std::nullopt;
    return engine;
}

void write_cached_engine(const EngineCachePaths& paths, const EngineKey& key, std::span<const char> engine) {
    std::error_code ec;
    std::filesystem::remove(paths.key, ec);  // until the new engine is complete, the entry is invalid
    write_file_atomically(paths.engine, engine);
    write_engine_key(paths, key);
}

void write_engine_key(const EngineCachePaths& paths, const EngineKey& key) {
    const std::string text = to_text(key);
    write_file_atomically(paths.key, std::span<const char>(text.data(), text.size()));
}

void remove_cached_engine(const EngineCachePaths& paths) {
    std::error_code ec;
    std::filesystem::remove(paths.key, ec);
    std::filesystem::remove(paths.engine, ec);
}

}  // namespace inferbench
