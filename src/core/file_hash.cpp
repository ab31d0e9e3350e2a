#include "core/file_hash.hpp"

#include <bit>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "core/splitmix64.hpp"

namespace inferbench {
namespace {

constexpr std::uint64_t kPrime1 = 0x9E3779B185EBCA87ull;
constexpr std::uint64_t kPrime2 = 0xC2B2AE3D27D4EB4Full;
constexpr std::size_t kChunkBytes = std::size_t{1} << 20;  // a multiple of 8: chunks hash like the whole

std::uint64_t round(std::uint64_t acc, std::uint64_t word) { return std::rotl(acc + word * kPrime2, 31) * kPrime1; }

// Hashes the whole 8-byte words of `data` into acc; returns how many bytes it consumed.
std::size_t absorb_words(std::uint64_t& acc, std::span<const std::byte> data) {
    std::size_t i = 0;
    for (; i + 8 <= data.size(); i += 8) {
        std::uint64_t word = 0;
        std::memcpy(&word, data.data() + i, 8);
        acc = round(acc, word);
    }
    return i;
}

std::uint64_t finish_tail(std::uint64_t acc, std::span<const std::byte> tail) {
    std::uint64_t word = 0;
    std::memcpy(&word, tail.data(), tail.size());
    return splitmix64_mix(round(acc, word));  // every input bit reaches every output bit
}

}  // namespace

std::uint64_t hash_bytes(std::span<const std::byte> data) {
    std::uint64_t acc = kPrime1 ^ data.size();
    const std::size_t words = absorb_words(acc, data);
    return finish_tail(acc, data.subspan(words));
}

std::uint64_t hash_file_contents(const std::filesystem::path& path) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(path, ec);
    std::ifstream in(path, std::ios::binary);
    if (ec || !in) throw std::runtime_error(fmt::format("cannot read {} to hash it", path.string()));
    std::uint64_t acc = kPrime1 ^ size;
    std::vector<std::byte> chunk(kChunkBytes);
    std::uintmax_t done = 0;
    while (true) {
        in.read(reinterpret_cast<char*>(chunk.data()), static_cast<std::streamsize>(chunk.size()));
        const auto got = static_cast<std::size_t>(in.gcount());
        done += got;
        if (got < chunk.size() || !in) {
            if (in.bad() || done != size) throw std::runtime_error(fmt::format("cannot read {} to hash it", path.string()));
            const std::span<const std::byte> last(chunk.data(), got);
            const std::size_t words = absorb_words(acc, last);
            return finish_tail(acc, last.subspan(words));
        }
        absorb_words(acc, chunk);
    }
}

}  // namespace inferbench
