// The one splitmix64: the reference implementation's outputs, its finalizer, and the floats it gives.
#include "core/splitmix64.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(SplitMix64, ReferenceValues) {
    // The reference implementation (prng.di.unimi.it/splitmix64.c) seeded with 0.
    std::uint64_t state = 0;
    EXPECT_EQ(splitmix64(state), 0xE220A8397B1DCDAFULL);
    EXPECT_EQ(splitmix64(state), 0x6E789E6AA1B965F4ULL);
    EXPECT_EQ(splitmix64(state), 0x06C45D188009454FULL);
    SplitMix64 stream(0);
    EXPECT_EQ(stream.next(), 0xE220A8397B1DCDAFULL) << "the stream is the same generator";
}

TEST(SplitMix64, UsableAtCompileTime) {
    constexpr std::uint64_t first = [] {
        std::uint64_t state = 0;
        return splitmix64(state);
    }();
    static_assert(first == 0xE220A8397B1DCDAFULL);
    static_assert(splitmix64_mix(0x9E3779B97F4A7C15ULL) == first, "a step is the finalizer of the advanced state");
    EXPECT_EQ(first, 0xE220A8397B1DCDAFULL);
}

TEST(SplitMix64, SignedUnitFloatsAreExactAndCoverTheInterval) {
    EXPECT_EQ(signed_unit_float(0), -1.0F);
    EXPECT_EQ(signed_unit_float(std::uint64_t{1} << 63), 0.0F);
    EXPECT_EQ(signed_unit_float(~std::uint64_t{0}), 1.0F - 0x1p-23F) << "below 1";
    EXPECT_EQ(signed_unit_float(std::uint64_t{1} << 40), -1.0F + 0x1p-23F) << "a grid of 2^-23";
    EXPECT_EQ(signed_unit_float((std::uint64_t{1} << 40) - 1), -1.0F) << "only the top 24 bits count";
}

}  // namespace
}  // namespace inferbench
