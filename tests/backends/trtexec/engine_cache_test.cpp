// The engine cache's key: a file hash that sees every byte, and file names that say what was built.
#include "backends/trtexec/engine_cache.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace inferbench::trtexec {
namespace {

TEST(EngineCache, HashSeesEveryByteAndTheLength) {
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

TEST(EngineCache, FileNamesSayWhatWasBuilt) {
    EngineKey key{"ResNet 50", 0x0123456789abcdefull, Precision::fp16, 8, "NVIDIA H200", "10.9.0", 0};
    EXPECT_EQ(engine_file_name(key), "resnet-50-0123456789abcdef-fp16-b8-nvidia-h200-trt10.9.0.engine");
    key.extra_args_hash = 0xfedcba9876543210ull;
    EXPECT_EQ(engine_file_name(key), "resnet-50-0123456789abcdef-fp16-b8-nvidia-h200-trt10.9.0-a76543210.engine");
    EXPECT_EQ(timing_cache_file_name("NVIDIA GeForce RTX 3050", "8.6.1"), "timing-nvidia-geforce-rtx-3050-trt8.6.1.cache");
    EXPECT_EQ(file_name_slug("../../etc/passwd"), "..-..-etc-passwd") << "no '/' reaches a file name";
    EXPECT_EQ(file_name_slug("///"), "unnamed");
}

}  // namespace
}  // namespace inferbench::trtexec
