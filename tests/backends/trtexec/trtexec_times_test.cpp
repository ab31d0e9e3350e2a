// The --exportTimes parser, on texts laid out as trtexec's exportJSONTrace writes them.
#include "backends/trtexec/trtexec_times.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>

namespace inferbench::trtexec {
namespace {

using ::testing::HasSubstr;

constexpr std::int64_t kOrigin = 5'000'000'000;

// TensorRT 8.x/10.x: no endToEndMs; ", " separators and " : " as printed by the ostream code.
constexpr const char* kTrt8Times = R"([
  { "startEnqMs" : 100.25, "endEnqMs" : 100.5, "startH2dMs" : 100.3, "endH2dMs" : 100.34, "startComputeMs" : 100.34, "endComputeMs" : 101.74, "startD2hMs" : 101.74, "endD2hMs" : 101.75, "h2dMs" : 0.0361328, "computeMs" : 1.39775, "d2hMs" : 0.00366211, "latencyMs" : 1.43755 }
, { "startEnqMs" : 101.5, "endEnqMs" : 101.75, "startH2dMs" : 101.76, "endH2dMs" : 101.8, "startComputeMs" : 101.8, "endComputeMs" : 103.2, "startD2hMs" : 103.2, "endD2hMs" : 103.21, "h2dMs" : 0.04, "computeMs" : 1.4, "d2hMs" : 0.01, "latencyMs" : 1.45 }
]
)";

TEST(TrtexecTimes, TensorRt8LayoutGivesEveryTime) {
    const auto records = parse_trtexec_times(kTrt8Times, kOrigin);
    ASSERT_EQ(records.size(), 2u);
    const IterationRecord& first = records[0];
    EXPECT_EQ(first.start_ns, kOrigin + 100'300'000);  // startH2dMs
    EXPECT_EQ(first.e2e_ns, 1'450'000);                // endD2hMs - startH2dMs
    EXPECT_EQ(first.enqueue_ns, 250'000);              // endEnqMs - startEnqMs
    EXPECT_EQ(first.h2d_ns, 36'133);                   // the printed interval, rounded to ns
    EXPECT_EQ(first.compute_ns, 1'397'750);
    EXPECT_EQ(first.d2h_ns, 3'662);
    EXPECT_EQ(records[1].start_ns, kOrigin + 101'760'000);
    EXPECT_EQ(records[1].e2e_ns, 1'450'000);
    EXPECT_EQ(records[1].compute_ns, 1'400'000);
}

TEST(TrtexecTimes, EndToEndKeyWinsOverTimestampDifference) {
    const auto records = parse_trtexec_times(
        R"([{"startH2dMs": 10000.1, "endD2hMs": 10001.6, "latencyMs": 1.2, "endToEndMs": 1.53421}])", 0);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].e2e_ns, 1'534'210);
    EXPECT_EQ(records[0].start_ns, 10'000'100'000);
}

TEST(TrtexecTimes, MissingKeysFallBack) {
    const auto records = parse_trtexec_times(R"([
        {"latencyMs": 2.5, "computeMs": 2},
        {"startComputeMs": 7, "endComputeMs": 8.5},
        {"startEnqMs": 1.0, "endEnqMs": 1.5, "enqueueMs": 0.75, "latencyMs": 3},
        {"startEnqMs": 4.0},
        {}
    ])", kOrigin);
    ASSERT_EQ(records.size(), 3u) << "objects with no latency at all are skipped";
    EXPECT_EQ(records[0].start_ns, kOrigin);  // no start at all: the origin
    EXPECT_EQ(records[0].e2e_ns, 2'500'000);  // latencyMs
    EXPECT_EQ(records[0].compute_ns, 2'000'000);
    EXPECT_EQ(records[0].h2d_ns, kNotMeasured);
    EXPECT_EQ(records[0].d2h_ns, kNotMeasured);
    EXPECT_EQ(records[0].enqueue_ns, kNotMeasured);
    EXPECT_EQ(records[1].start_ns, kOrigin + 7'000'000);  // the compute start, when that is all there is
    EXPECT_EQ(records[1].e2e_ns, 1'500'000);              // compute alone
    EXPECT_EQ(records[1].compute_ns, 1'500'000);
    EXPECT_EQ(records[2].start_ns, kOrigin + 1'000'000);  // the enqueue start
    EXPECT_EQ(records[2].enqueue_ns, 750'000);            // a printed enqueue interval wins
}

TEST(TrtexecTimes, TensorRt7InAndOutNames) {
    const auto records = parse_trtexec_times(
        R"([{"startInMs": 3, "endInMs": 3.25, "startComputeMs": 3.25, "endComputeMs": 4, "startOutMs": 4,
             "endOutMs": 4.5, "inMs": 0.25, "computeMs": 0.75, "outMs": 0.5, "latencyMs": 1.5}])",
        0);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].start_ns, 3'000'000);
    EXPECT_EQ(records[0].e2e_ns, 1'500'000);
    EXPECT_EQ(records[0].h2d_ns, 250'000);
    EXPECT_EQ(records[0].d2h_ns, 500'000);
}

TEST(TrtexecTimes, KeysAreMatchedWithoutCaseAndNumbersMayHaveExponents) {
    const auto records = parse_trtexec_times(
        "[ { \"STARTH2DMS\" : 1e-3, \"endD2HMs\" : 2.5E+00, \"d2hMs\" : 5e-05 } ]\n", 0);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].start_ns, 1'000);
    EXPECT_EQ(records[0].e2e_ns, 2'499'000);
    EXPECT_EQ(records[0].d2h_ns, 50);
}

TEST(TrtexecTimes, EmptyArray) {
    EXPECT_TRUE(parse_trtexec_times("[\n]\n", kOrigin).empty());
    EXPECT_TRUE(parse_trtexec_times("[]", kOrigin).empty());
}

TEST(TrtexecTimes, MalformedTextIsAnErrorWithItsOffset) {
    const auto message = [](std::string_view text) {
        try {
            parse_trtexec_times(text, 0);
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_THAT(message(""), HasSubstr("no '[' at byte 0"));
    EXPECT_THAT(message("[{\"computeMs\": 1.0}"), HasSubstr("no ']' at byte 19"));
    EXPECT_THAT(message("[{\"computeMs\": \"fast\"}]"), HasSubstr("not a finite number at byte 15"));
    EXPECT_THAT(message("[{\"computeMs: 1}]"), HasSubstr("unterminated key"));
    EXPECT_THAT(message("[] trailing"), HasSubstr("text after the array at byte 3"));
    EXPECT_THAT(message("{\"computeMs\": 1}"), HasSubstr("no '['"));
}

}  // namespace
}  // namespace inferbench::trtexec
