// The model-file hash of both engine caches: sees every byte and the length; a file hashes like its bytes.
#include "core/file_hash.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <stdexcept>
#include <vector>

#include "common/scratch_dir.hpp"

namespace inferbench {
namespace {

TEST(FileHash, SeesEveryByteAndTheLength) {
    std::vector<std::byte> data(1001, std::byte{0x5a});
    const std::uint64_t base = hash_bytes(data);
    EXPECT_EQ(hash_bytes(data), base) << "stable";
    std::set<std::uint64_t> seen = {base};
    for (const std::size_t at : {std::size_t{0}, std::size_t{7}, std::size_t{8}, std::size_t{500}, std::size_t{1000}}) {
        for (const unsigned bit : {0u, 7u}) {
            auto changed = data;
            changed[at] ^= std::byte{static_cast<unsigned char>(1u << bit)};
            EXPECT_TRUE(seen.insert(hash_bytes(changed)).second) << "byte " << at << " bit " << bit;
        }
    }
    data.push_back(std::byte{0});
    EXPECT_TRUE(seen.insert(hash_bytes(data)).second) << "a trailing zero byte";
    EXPECT_NE(hash_bytes({}), hash_bytes(std::vector<std::byte>(1, std::byte{0})));
}

// Engine caches are keyed by this hash: a change would rebuild every cached engine.
TEST(FileHash, TheHashOfGivenBytesIsPinned) {
    const std::string text = "inferbench model bytes";
    EXPECT_EQ(hash_bytes(std::as_bytes(std::span(text))), 0xEB42E3FAC3FA2217ULL);
    EXPECT_EQ(hash_bytes({}), 0xF7E7FE24ED633A36ULL);
}

TEST(FileHash, AFileHashesLikeItsBytesAcrossChunks) {
    const testing::ScratchDir dir;
    // Sizes around the 1 MiB read chunk, and one not a multiple of 8.
    for (const std::size_t size : {std::size_t{0}, std::size_t{13}, std::size_t{1} << 20, (std::size_t{3} << 20) + 17}) {
        std::string text(size, 'x');
        if (size > 100) text[size / 2] = 'y';
        dir.write("model.onnx", text);
        EXPECT_EQ(hash_file_contents(dir.file("model.onnx")), hash_bytes(std::as_bytes(std::span(text)))) << size;
    }
    EXPECT_THROW(hash_file_contents(dir.file("absent.onnx")), std::runtime_error);
}

}  // namespace
}  // namespace inferbench
