// The engine cache's key: file names that say what was built.
#include "backends/trtexec/engine_cache.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace inferbench::trtexec {
namespace {

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
