#include "pipeline/stage_timer.hpp"

#include <gtest/gtest.h>

namespace inferbench::pipeline {
namespace {

TEST(StageTimer, SpanEndsAfterItStartsAndCountsThisThreadsCpu) {
    const StageTimer timer;
    volatile std::uint64_t sink = 0;
    for (std::uint64_t i = 0; i < 2'000'000; ++i) sink = sink + i * i;
    const StageSpan span = timer.stop();
    EXPECT_GE(span.end_ns, span.start_ns);
    ASSERT_NE(span.cpu_ns, kStageNotMeasured);
    EXPECT_GT(span.cpu_ns, 0);
}

TEST(StageTimer, ThreadsSpansFoldIntoOneStageTime) {
    PipelineStageTime stage{.iteration = 3, .stage = PipelineStage::decode};
    add_span(stage, {.start_ns = 100, .end_ns = 400, .cpu_ns = 250}, 4);
    add_span(stage, {.start_ns = 50, .end_ns = 300, .cpu_ns = 200}, 4);
    EXPECT_EQ(stage.start_ns, 50);
    EXPECT_EQ(stage.end_ns, 400);
    EXPECT_EQ(stage.cpu_ns, 450);
    EXPECT_EQ(stage.images, 8);
    add_span(stage, {.start_ns = 60, .end_ns = 500, .cpu_ns = kStageNotMeasured}, 1);
    EXPECT_EQ(stage.cpu_ns, kStageNotMeasured);
    EXPECT_EQ(stage.end_ns, 500);
}

}  // namespace
}  // namespace inferbench::pipeline
