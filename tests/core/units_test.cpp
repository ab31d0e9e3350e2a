#include "core/units.hpp"

#include "core/time_units.hpp"

#include <cstdint>

#include <gtest/gtest.h>

namespace inferbench {
namespace {

TEST(Units, ParsesDurationsWithUnits) {
    EXPECT_EQ(parse_duration_ns("5s"), 5'000'000'000);
    EXPECT_EQ(parse_duration_ns("250ms"), 250'000'000);
    EXPECT_EQ(parse_duration_ns("1.5s"), 1'500'000'000);
    EXPECT_EQ(parse_duration_ns("2m"), 120'000'000'000);
    EXPECT_EQ(parse_duration_ns("2min"), 120'000'000'000);
    EXPECT_EQ(parse_duration_ns("100us"), 100'000);
    EXPECT_EQ(parse_duration_ns("10ns"), 10);
    EXPECT_EQ(parse_duration_ns(" 1h "), 3'600'000'000'000);
}

TEST(Units, RejectsDurationsWithoutOrWithBadUnits) {
    std::string why;
    EXPECT_FALSE(parse_duration_ns("10", &why));
    EXPECT_NE(why.find("no unit"), std::string::npos);
    EXPECT_FALSE(parse_duration_ns("10parsecs", &why));
    EXPECT_NE(why.find("unknown unit"), std::string::npos);
    EXPECT_FALSE(parse_duration_ns("fast", &why));
    EXPECT_FALSE(parse_duration_ns("", &why));
    EXPECT_FALSE(parse_duration_ns("1e30h", &why));
    EXPECT_EQ(parse_duration_ns("0s"), 0);
    EXPECT_EQ(parse_duration_ns("2min"), 120'000'000'000);
    EXPECT_FALSE(parse_duration_ns("99999999999h", &why));
    EXPECT_EQ(why, "'99999999999h' is out of range");
}

TEST(Units, FormatsDurationsExactly) {
    EXPECT_EQ(format_duration(5'000'000'000), "5s");
    EXPECT_EQ(format_duration(1'500'000'000), "1500ms");
    EXPECT_EQ(format_duration(120'000'000'000), "2m");
    EXPECT_EQ(format_duration(0), "0s");
    EXPECT_EQ(format_duration(1234), "1234ns");
}

TEST(Units, FormatsLatencies) {
    EXPECT_EQ(format_latency(812), "812 ns");
    EXPECT_EQ(format_latency(812'400), "812.40 us");
    EXPECT_EQ(format_latency(23'410'000), "23.41 ms");
}

// Every printer's nanoseconds go through these: integers and doubles alike, exactly as a division would read.
TEST(Units, ConvertsNanosecondsToDisplayUnitsByDividing) {
    static_assert(ns_to_ms(std::int64_t{2'500'000}) == 2.5);
    EXPECT_DOUBLE_EQ(ns_to_us(std::int64_t{812'400}), 812.4);
    EXPECT_DOUBLE_EQ(ns_to_ms(23'410'000.0), 23.41);
    EXPECT_DOUBLE_EQ(ns_to_s(std::int64_t{1'500'000'000}), 1.5);
    // 480000000 * 1e-9 reads 0.48000000000000004; the division reads 0.48, as CSV and JSON print it.
    EXPECT_EQ(ns_to_s(std::int64_t{480'000'000}), 0.48);
    EXPECT_NE(480'000'000 * 1e-9, 0.48);
    // A count beyond 2^53 converts as static_cast<double> does, then divides.
    constexpr std::int64_t huge = (std::int64_t{1} << 60) + 1;
    EXPECT_EQ(ns_to_ms(huge), static_cast<double>(huge) / 1e6);
    EXPECT_EQ(ns_to_ms(-3'000'000), -3.0);
}

TEST(Units, ConvertsDisplayUnitsBackToNanoseconds) {
    static_assert(ms_to_ns(2.5) == 2'500'000.0);
    EXPECT_EQ(ms_to_ns(23.41), 23.41 * 1e6);
    EXPECT_EQ(s_to_ns(1.5), 1'500'000'000.0);
    EXPECT_EQ(ns_to_ms(ms_to_ns(4.0)), 4.0);
}

TEST(Units, SplitsAndTrimsLists) {
    EXPECT_EQ(split_list("1, 8,32"), (std::vector<std::string>{"1", "8", "32"}));
    EXPECT_EQ(split_list("a,,b"), (std::vector<std::string>{"a", "", "b"}));
    EXPECT_EQ(parse_int(" 42 "), 42);
    EXPECT_FALSE(parse_int("4x"));
}

}  // namespace
}  // namespace inferbench
