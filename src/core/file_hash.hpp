// The one hash of a model file's bytes, for the engine caches: a fast 64-bit hash (one multiply-rotate
// round per 8 bytes, several GB/s) that changes with any change of the file. A cache key, not a
// defence against forged files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>

namespace inferbench {

std::uint64_t hash_bytes(std::span<const std::byte> data);
// hash_bytes of the file's contents, read in chunks (the file is never held whole in memory).
// Throws std::runtime_error when it cannot be read.
std::uint64_t hash_file_contents(const std::filesystem::path& path);

}  // namespace inferbench
