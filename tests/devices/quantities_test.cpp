// Units of device figures: rates (FLOP/s vs OPS), bandwidths, intensities, byte sizes.
#include <gtest/gtest.h>

#include "devices/quantities.hpp"

namespace inferbench::devices {
namespace {

TEST(Quantities, RatesSayFlopsOrOps) {
    EXPECT_EQ(format_rate(989.5e12, false), "989.5 TFLOP/s");
    EXPECT_EQ(format_rate(1979e12, true), "1979 TOPS");
    EXPECT_EQ(format_rate(166.16e9, false), "166.2 GFLOP/s");
    EXPECT_EQ(format_rate(5.5e9, true), "5.500 GOPS");
    EXPECT_EQ(format_rate(12.346e12, false), "12.35 TFLOP/s");
}

TEST(Quantities, BandwidthAndIntensity) {
    EXPECT_EQ(format_bandwidth(4.8e12), "4.80 TB/s");
    EXPECT_EQ(format_bandwidth(448e9), "448.0 GB/s");
    EXPECT_EQ(format_intensity(206.15, false), "206.2 FLOP/B");
    EXPECT_EQ(format_intensity(3.5, true), "3.500 OP/B");
}

TEST(Quantities, ByteSizes) {
    EXPECT_EQ(parse_byte_size("1GiB"), std::int64_t{1} << 30);
    EXPECT_EQ(parse_byte_size(" 64 MiB "), std::int64_t{64} << 20);
    EXPECT_EQ(parse_byte_size("500MB"), 500'000'000);
    EXPECT_EQ(parse_byte_size("1.5KiB"), 1536);
    std::string why;
    EXPECT_EQ(parse_byte_size("1024", &why), std::nullopt);
    EXPECT_EQ(why, "'1024' has no unit; write e.g. 1GiB, 64MiB or 500MB");
    EXPECT_EQ(parse_byte_size("3 parsecs", &why), std::nullopt);
    EXPECT_EQ(why, "'3 parsecs' has an unknown unit 'parsecs'; valid units: B, KiB, MiB, GiB, kB, KB, MB, GB");
    EXPECT_EQ(parse_byte_size("0B", &why), std::nullopt);
    EXPECT_EQ(format_byte_size(std::int64_t{1} << 30), "1 GiB");
    EXPECT_EQ(format_byte_size(3 << 20), "3 MiB");
    EXPECT_EQ(format_byte_size(1000), "1000 B");
}

}  // namespace
}  // namespace inferbench::devices
