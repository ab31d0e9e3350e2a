// The one FNV-1a hash: reference values (what it names, seeds and file names, must not change).
#include "core/fnv1a.hpp"

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(Fnv1a, ReferenceValues) {
    EXPECT_EQ(fnv1a64(""), 0xCBF29CE484222325ULL);
    EXPECT_EQ(fnv1a64("a"), 0xAF63DC4C8601EC8CULL);
    EXPECT_EQ(fnv1a64("foobar"), 0x85944171F73967E8ULL);
    static_assert(fnv1a64("a") == 0xAF63DC4C8601EC8CULL, "usable at compile time");
}

TEST(Fnv1a, ContinuesOverPieces) {
    EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
    EXPECT_EQ(fnv1a64("", fnv1a64("foo")), fnv1a64("foo"));
    EXPECT_NE(fnv1a64("ab"), fnv1a64("ba"));
}

TEST(Fnv1a, HashesBytesAboveSevenBitsAsUnsigned) {
    // A sign-extended char would xor in 0xff..ff80 instead of 0x80.
    EXPECT_EQ(fnv1a64("\x80"), (kFnv1aOffsetBasis ^ 0x80ULL) * 0x100000001b3ULL);
}

}  // namespace
}  // namespace inferbench
