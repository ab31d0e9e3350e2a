// Writes .npz archives as numpy.savez does (stored entries, each local header with a zip64 extra field, as
// Python's zipfile writes with force_zip64), for tests that feed inputs from files.
#pragma once

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "backends/npy_file.hpp"

namespace inferbench::testing {

inline std::uint32_t crc32_of(const std::string& bytes) {
    std::uint32_t crc = 0xFFFFFFFFu;
    for (const char c : bytes) {
        crc ^= static_cast<unsigned char>(c);
        for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

inline void put_le(std::string& out, std::uint64_t value, int bytes) {
    for (int k = 0; k < bytes; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xFF));
}

// The .npy bytes of `tensor`, through the project's own writer.
inline std::string npy_bytes(const HostTensor& tensor, const std::filesystem::path& scratch) {
    const auto file = scratch / ".npz_entry.npy";
    write_npy_file(file, tensor);
    std::ifstream in(file, std::ios::binary);
    std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    std::filesystem::remove(file);
    return bytes;
}

// Each tensor as the entry "<name>.npy". Another `method` than 0 (stored) marks the entries so, their bytes
// left as they are, for the test of a compression numpy does not write (numpy.savez_compressed's archives are
// fixtures that numpy wrote: tests/backends/fixtures).
inline void write_npz(const std::filesystem::path& file, const std::vector<HostTensor>& tensors, std::uint16_t method = 0) {
    std::string out, directory;
    for (const auto& tensor : tensors) {
        const std::string data = npy_bytes(tensor, file.parent_path());
        const std::string name = tensor.info.name + ".npy";
        const std::uint64_t offset = out.size();
        const std::uint32_t crc = crc32_of(data);
        put_le(out, 0x04034b50, 4);
        put_le(out, 45, 2);
        put_le(out, 0, 2);
        put_le(out, method, 2);
        put_le(out, 0, 4);  // time, date
        put_le(out, crc, 4);
        put_le(out, 0xFFFFFFFF, 4);
        put_le(out, 0xFFFFFFFF, 4);
        put_le(out, name.size(), 2);
        put_le(out, 20, 2);
        out += name;
        put_le(out, 0x0001, 2);
        put_le(out, 16, 2);
        put_le(out, data.size(), 8);
        put_le(out, data.size(), 8);
        out += data;
        put_le(directory, 0x02014b50, 4);
        put_le(directory, 45, 2);
        put_le(directory, 45, 2);
        put_le(directory, 0, 2);
        put_le(directory, method, 2);
        put_le(directory, 0, 4);
        put_le(directory, crc, 4);
        put_le(directory, data.size(), 4);
        put_le(directory, data.size(), 4);
        put_le(directory, name.size(), 2);
        put_le(directory, 0, 2);  // extra
        put_le(directory, 0, 2);  // comment
        put_le(directory, 0, 2);  // disk
        put_le(directory, 0, 2);  // internal attributes
        put_le(directory, 0, 4);  // external attributes
        put_le(directory, offset, 4);
        directory += name;
    }
    const std::uint64_t directory_offset = out.size();
    out += directory;
    put_le(out, 0x06054b50, 4);
    put_le(out, 0, 4);
    put_le(out, tensors.size(), 2);
    put_le(out, tensors.size(), 2);
    put_le(out, directory.size(), 4);
    put_le(out, directory_offset, 4);
    put_le(out, 0, 2);
    std::ofstream(file, std::ios::binary) << out;
}

// A float32 tensor of `shape` whose elements are start, start + 1, ...
inline HostTensor counting_tensor(std::string name, std::vector<std::int64_t> shape, float start = 0) {
    HostTensor t{{std::move(name), DType::f32, std::move(shape)}, {}};
    t.data.resize(t.info.byte_size());
    for (std::int64_t i = 0; i < t.info.element_count(); ++i) {
        const float value = start + static_cast<float>(i);
        std::memcpy(t.data.data() + static_cast<std::size_t>(i) * 4, &value, 4);
    }
    return t;
}

}  // namespace inferbench::testing
