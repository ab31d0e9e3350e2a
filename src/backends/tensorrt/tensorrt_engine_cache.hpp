// The engine cache of both TensorRT backends (tensorrt, built in-process, and trtexec): a built engine is
// kept as a file named and keyed by everything that makes TensorRT build a different engine, so that a
// cell rebuilds only when one of those changes. SDK-free.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/tensorrt/tensorrt_options.hpp"
#include "backends/tensorrt/tensorrt_platform.hpp"
#include "core/spec.hpp"

namespace inferbench {

struct EngineKey {
    std::string model_hash;  // hash_file(): core/file_hash.hpp of the model file, 16 hex digits
    std::uint64_t model_size_bytes = 0;
    Precision precision = Precision::fp32;
    std::int64_t batch_size = 1;
    std::string gpu_name;
    ComputeCapability compute_capability;  // {0, 0}: not known (trtexec asks no CUDA API)
    std::string tensorrt_version;          // "10.3.0": of the library (or trtexec) that builds and runs it
    std::string build_settings;            // what else changes the engine: build_settings_text(), trtexec's args
};

// "field=value" lines: written beside the engine and compared, byte for byte, before it is reused.
std::string to_text(const EngineKey& key);
// The build options that change the engine; `calibration` is calibration_identity() for int8, else "".
std::string build_settings_text(const TensorRtOptions& options, const BuildFlags& flags, std::string_view calibration);

struct EngineCachePaths {
    std::filesystem::path engine;
    std::filesystem::path key;
};

// <model>.<precision>.b<batch>.<gpu>.sm<cc>.trt<version>.<digest of the key>.engine (and .key), without
// .sm<cc> where it is not known: readable names, and two settings of one model never overwrite each
// other's engine.
EngineCachePaths engine_cache_paths(const std::filesystem::path& dir, const std::string& model_path, const EngineKey& key);
// Timing caches hold kernel timings of one GPU model and one TensorRT version; any model may share them.
std::filesystem::path timing_cache_path(const std::filesystem::path& dir, std::string_view gpu_name,
                                        ComputeCapability cc, std::string_view tensorrt_version);
// The option when given, else <model cache dir>/tensorrt, else a folder in the temporary directory.
std::filesystem::path resolve_cache_dir(const std::string& option, const std::string& model_cache_dir);

std::string hex64(std::uint64_t value);  // 16 lowercase hex digits
std::string hash_file(const std::filesystem::path& path);  // hex64(hash_file_contents(path)); throws runtime_error
std::string slug(std::string_view text);  // "NVIDIA H100 80GB HBM3" -> "nvidia-h100-80gb-hbm3"

std::optional<std::vector<char>> read_file(const std::filesystem::path& path);  // nothing if absent or unreadable
// Writes a temporary file beside `path` and renames it: readers see the old file or the whole new one.
void write_file_atomically(const std::filesystem::path& path, std::span<const char> bytes);  // throws runtime_error

// The key file holds exactly `key` and the engine file is not empty: the cached engine may be used.
bool cached_engine_matches(const EngineCachePaths& paths, const EngineKey& key);
// The cached engine when cached_engine_matches(); otherwise nothing (never built, or stale).
std::optional<std::vector<char>> read_cached_engine(const EngineCachePaths& paths, const EngineKey& key);
// The engine first, then its key, so that a crash between the two leaves an entry that is rebuilt.
void write_cached_engine(const EngineCachePaths& paths, const EngineKey& key, std::span<const char> engine);
// The key alone, for an engine another program wrote to paths.engine (trtexec --saveEngine).
void write_engine_key(const EngineCachePaths& paths, const EngineKey& key);
void remove_cached_engine(const EngineCachePaths& paths);

}  // namespace inferbench
