#include "runner/worker/measure_loop.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "backends/null/null_backend.hpp"

namespace inferbench::runner {
namespace {

// Counts inferences and reports a fixed compute time, to check what the loop records.
class CountingBackend final : public Backend {
public:
    std::string name() const override { return "counting"; }
    std::string version() const override { return "1"; }
    Capabilities capabilities() const override { return {}; }
    void load(const std::string&, const BenchmarkSpec&) override {}
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor>) override {}
    void infer(DeviceTimes& times) override {
        ++calls;
        times.compute_ns = 77;
        if (sleep_us) std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    }
    int calls = 0;
    int sleep_us = 0;
};

struct Buffer {
    explicit Buffer(std::size_t n) : records(n) {}
    TraceSink sink() { return {records.data(), &published}; }
    std::vector<IterationRecord> records;
    std::atomic<std::int64_t> published{0};
};

TEST(MeasureLoop, StopsAtMaxIterations) {
    CountingBackend backend;
    Buffer buffer(100);
    LoopSettings loop;
    loop.duration_ns = 60'000'000'000;
    loop.max_iterations = 100;
    std::atomic<std::int32_t> stop{0};
    const auto result = run_measured(backend, loop, buffer.sink(), stop);
    EXPECT_EQ(result.iterations, 100);
    EXPECT_EQ(buffer.published.load(), 100);
    EXPECT_EQ(backend.calls, 100);
    EXPECT_FALSE(result.stopped);
    EXPECT_EQ(buffer.records[99].compute_ns, 77);
    EXPECT_EQ(buffer.records[99].h2d_ns, kNotMeasured);
    for (std::size_t i = 1; i < 100; ++i) EXPECT_GE(buffer.records[i].start_ns, buffer.records[i - 1].start_ns);
    EXPECT_EQ(result.wall_ns, buffer.records[99].start_ns + buffer.records[99].e2e_ns - buffer.records[0].start_ns);
}

TEST(MeasureLoop, RunsAtLeastMinIterationsEvenPastTheDuration) {
    CountingBackend backend;
    Buffer buffer(1000);
    LoopSettings loop;
    loop.duration_ns = 0;
    loop.min_iterations = 25;
    loop.max_iterations = 1000;
    std::atomic<std::int32_t> stop{0};
    EXPECT_EQ(run_measured(backend, loop, buffer.sink(), stop).iterations, 25);
}

TEST(MeasureLoop, RunsForTheDuration) {
    CountingBackend backend;
    backend.sleep_us = 1000;
    Buffer buffer(100000);
    LoopSettings loop;
    loop.duration_ns = 50'000'000;
    loop.min_iterations = 1;
    loop.max_iterations = 100000;
    std::atomic<std::int32_t> stop{0};
    const auto result = run_measured(backend, loop, buffer.sink(), stop);
    EXPECT_GE(result.wall_ns, 50'000'000);
    EXPECT_GE(buffer.records[0].e2e_ns, 1'000'000);  // each inference slept 1 ms
}

TEST(MeasureLoop, AStopRequestEndsTheLoopAndKeepsRecords) {
    CountingBackend backend;
    Buffer buffer(10);
    LoopSettings loop;
    loop.duration_ns = 60'000'000'000;
    loop.max_iterations = 10;
    std::atomic<std::int32_t> stop{1};
    const auto result = run_measured(backend, loop, buffer.sink(), stop);
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.iterations, 0);
}

TEST(MeasureLoop, WarmupNeedsBothTimeAndIterations) {
    CountingBackend backend;
    LoopSettings loop;
    loop.warmup_ns = 0;
    loop.warmup_iterations = 7;
    std::atomic<std::int32_t> stop{0};
    EXPECT_EQ(run_warmup(backend, loop, stop).iterations, 7);
    loop.warmup_ns = 20'000'000;
    loop.warmup_iterations = 1;
    const auto warm = run_warmup(backend, loop, stop);
    EXPECT_GE(warm.elapsed_ns, 20'000'000);
    EXPECT_GE(warm.iterations, 1);
}

TEST(MeasureLoop, TheCellsSettingsRunWithinTheTraceCapacity) {
    LoopSettings cell;
    cell.warmup_ns = 7;
    cell.max_iterations = 0;  // no limit: the trace's capacity is the limit
    cell.min_iterations = 50;
    LoopSettings bounded = within_capacity(cell, 20);
    EXPECT_EQ(bounded.max_iterations, 20);
    EXPECT_EQ(bounded.min_iterations, 20) << "never more than the buffer holds";
    EXPECT_EQ(bounded.warmup_ns, 7);
    EXPECT_EQ(bounded.duration_ns, cell.duration_ns);
    cell.min_iterations = 0;
    EXPECT_EQ(within_capacity(cell, 20).min_iterations, 1) << "at least one iteration";
}

// Work between iterations (the L2 flush's shape): counted, and slow enough that it would show if it
// were timed.
class SlowBetween final : public BetweenIterations {
public:
    explicit SlowBetween(const CountingBackend& backend) : backend_(backend) {}
    void run() override {
        if (backend_.calls != runs) in_order = false;  // runs before each inference, once
        ++runs;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    int runs = 0;
    bool in_order = true;

private:
    const CountingBackend& backend_;
};

TEST(MeasureLoop, WorkBetweenIterationsRunsBeforeEachOneAndIsNotTimed) {
    CountingBackend backend;
    SlowBetween between(backend);
    Buffer buffer(5);
    LoopSettings loop;
    loop.duration_ns = 60'000'000'000;
    loop.max_iterations = 5;
    std::atomic<std::int32_t> stop{0};
    const auto result = run_measured(backend, loop, buffer.sink(), stop, &between);
    EXPECT_EQ(result.iterations, 5);
    EXPECT_EQ(between.runs, 5);
    EXPECT_TRUE(between.in_order);
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_LT(buffer.records[i].e2e_ns, 20'000'000) << "the 20 ms between iterations is outside the timed region";
        if (i > 0) {
            EXPECT_GE(buffer.records[i].start_ns - buffer.records[i - 1].start_ns, 20'000'000);
        }
    }

    CountingBackend warm;
    SlowBetween warm_between(warm);
    loop.warmup_ns = 0;
    loop.warmup_iterations = 3;
    EXPECT_EQ(run_warmup(warm, loop, stop, &warm_between).iterations, 3);
    EXPECT_EQ(warm_between.runs, 3) << "warm-up iterations run under the same conditions";
}

TEST(MeasureLoop, NullBackendRecordsEveryIteration) {
    auto backend = make_null_backend();
    Buffer buffer(10000);
    LoopSettings loop;
    loop.duration_ns = 60'000'000'000;
    loop.max_iterations = 10000;
    std::atomic<std::int32_t> stop{0};
    EXPECT_EQ(run_measured(*backend, loop, buffer.sink(), stop).iterations, 10000);
    EXPECT_GE(buffer.records[9999].e2e_ns, 0);
}

// A ring of 8 records drained by another thread: a loop of any length, every record in order, and the
// loop waiting (untimed) when the ring is full rather than overwriting what was not taken out.
TEST(MeasureLoop, ARingIsNeverOverwrittenBeforeItIsDrained) {
    CountingBackend backend;
    constexpr std::int64_t kRing = 8;
    std::vector<IterationRecord> ring(kRing);
    std::atomic<std::int64_t> published{0};
    std::atomic<std::int64_t> consumed{0};
    TraceSink sink{ring.data(), &published, &consumed, kRing};
    LoopSettings loop;
    loop.duration_ns = 60'000'000'000;
    loop.max_iterations = 1000;
    std::atomic<std::int32_t> stop{0};
    std::vector<IterationRecord> drained;
    std::atomic<bool> done{false};
    std::thread drainer([&] {
        while (true) {
            const bool last = done.load();
            const std::int64_t until = published.load(std::memory_order_acquire);
            for (std::int64_t i = consumed.load(); i < until; ++i) drained.push_back(ring[static_cast<std::size_t>(i % kRing)]);
            consumed.store(until, std::memory_order_release);
            if (last) break;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
    });
    const auto result = run_measured(backend, loop, sink, stop);
    done.store(true);
    drainer.join();
    EXPECT_EQ(result.iterations, 1000);
    ASSERT_EQ(drained.size(), 1000u);
    for (std::size_t i = 1; i < drained.size(); ++i)
        ASSERT_GT(drained[i].start_ns, drained[i - 1].start_ns) << "record " << i << " was overwritten or repeated";
    const std::int64_t span = drained.back().start_ns + drained.back().e2e_ns - drained.front().start_ns;
    EXPECT_LE(result.wall_ns, span) << "the waits for room are not the loop's time";
    EXPECT_GT(result.wall_ns, 0);
}

// A stop while the ring is full ends the wait and the loop.
TEST(MeasureLoop, AStopEndsAWaitForRoom) {
    CountingBackend backend;
    std::vector<IterationRecord> ring(4);
    std::atomic<std::int64_t> published{0};
    std::atomic<std::int64_t> consumed{0};  // never drained
    LoopSettings loop;
    loop.duration_ns = 60'000'000'000;
    loop.max_iterations = 100;
    std::atomic<std::int32_t> stop{0};
    std::thread stopper([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        stop.store(1);
    });
    const auto result = run_measured(backend, loop, TraceSink{ring.data(), &published, &consumed, 4}, stop);
    stopper.join();
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.iterations, 4);
    EXPECT_EQ(backend.calls, 4);
}

}  // namespace
}  // namespace inferbench::runner
