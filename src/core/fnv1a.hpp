// The one FNV-1a hash (64 bit) of short texts: names, keys, settings. Stable across compilers, standard
// libraries and runs, unlike std::hash, so what it names (seeds, file names) stays the same. Model
// files are hashed with core/file_hash.hpp, which is faster on large inputs.
#pragma once

#include <cstdint>
#include <string_view>

namespace inferbench {

inline constexpr std::uint64_t kFnv1aOffsetBasis = 0xcbf29ce484222325ULL;

// `state` continues a hash over several pieces: fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b).
constexpr std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t state = kFnv1aOffsetBasis) {
    constexpr std::uint64_t kPrime = 0x100000001b3ULL;
    for (const char c : bytes) {
        state ^= static_cast<unsigned char>(c);
        state *= kPrime;
    }
    return state;
}

}  // namespace inferbench
