// The progress's estimate of a cell's time: its planned measured phase, or the time its minimum query count
// takes at the pace a finished cell of the same setup showed, plus what finished cells spent besides measuring.
#include "runner/orchestrator/run_estimate.hpp"

#include <gtest/gtest.h>

namespace inferbench::runner {
namespace {

constexpr std::int64_t kS = 1'000'000'000;

BenchmarkSpec cell(const std::string& model, std::int64_t batch) {
    BenchmarkSpec spec;
    spec.model = model;
    spec.backend = "onnxruntime";
    spec.batch_size = batch;
    spec.loop.warmup_ns = kS;
    spec.loop.duration_ns = 5 * kS;
    spec.loop.min_iterations = 64;  // the default plan's single_stream, raised for its p90 estimate
    return spec;
}

TEST(RunEstimate, BeforeAnyCellFinishedItIsTheWarmUpAndTheDuration) {
    EXPECT_EQ(estimate_cell_ns(cell("resnet50", 8), {}), 6 * kS);
}

// The default plan on a busy 2-core host: resnet50 at batch 1 ran 64 queries of 0.1 s in 6.4 s, so batch 8's
// 64 queries take about 8 x that, 51 s, not the 5 s duration.
TEST(RunEstimate, AMinimumQueryCountLongerThanTheDurationCounts) {
    const BenchmarkSpec b1 = cell("resnet50", 1);
    const BenchmarkSpec mobilenet = cell("mobilenet", 8);
    const std::vector<FinishedCell> finished = {{&mobilenet, 7 * kS, 5 * kS, 500},
                                                {&b1, 9 * kS, 64 * kS / 10, 64}};
    // Overhead: the finished cells' mean time besides measuring, (2 s + 2.6 s) / 2.
    const std::int64_t overhead = 2'300'000'000;
    EXPECT_NEAR(static_cast<double>(estimate_cell_ns(cell("resnet50", 8), finished)),
                static_cast<double>(overhead + 8 * 64 * kS / 10), 1e3);
    EXPECT_NEAR(static_cast<double>(estimate_cell_ns(cell("resnet50", 2), finished)),
                static_cast<double>(overhead + 2 * 64 * kS / 10), 1e3);
    // A fast cell's duration is what lasts: mobilenet at batch 1 (0.0125 s a query x 64 < 5 s).
    EXPECT_EQ(estimate_cell_ns(cell("mobilenet", 1), finished), overhead + 5 * kS);
    // No finished cell of its setup: the duration, as nothing says more.
    EXPECT_EQ(estimate_cell_ns(cell("bert", 8), finished), overhead + 5 * kS);
}

TEST(RunEstimate, AServersMinimumQueriesAtItsRate) {
    BenchmarkSpec server = cell("resnet50", 1);
    server.scenario.scenario = Scenario::server;
    server.scenario.target_qps = 10;
    server.loop.min_iterations = 100;  // 10 s at 10 a second
    EXPECT_EQ(estimate_cell_ns(server, {}), 11 * kS);
}

}  // namespace
}  // namespace inferbench::runner
