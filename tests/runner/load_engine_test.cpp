// The query engine on a virtual clock with scripted inference times: every arrival, wait and completion
// below is computed by hand (ms from the run's start).
#include "runner/load/load_engine.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <vector>

#include "scripted_backend.hpp"
#include "virtual_clock.hpp"

namespace inferbench::runner {
namespace {

using testing::Script;
using testing::ScriptedBackend;

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kUs = 1'000;

struct Query {
    std::int64_t arrival, e2e, queue;  // ms x 1000 (us), from the start
    friend bool operator==(const Query&, const Query&) = default;
};

std::ostream& operator<<(std::ostream& out, const Query& q) {
    return out << "{arrival " << q.arrival << " us, e2e " << q.e2e << " us, queue " << q.queue << " us}";
}

class Rig {
public:
    // One stream of instances at `batch_sizes`, each taking `script`'s times.
    void add_stream(const Script& script, const std::vector<std::int64_t>& batch_sizes = {1}) {
        StreamInstances& instances = streams_.emplace_back();
        for (const std::int64_t batch : batch_sizes) {
            auto backend = std::make_unique<ScriptedBackend>(script, clock_, log_, static_cast<int>(streams_.size() - 1));
            backend->set_batch_size(batch);
            instances.push_back({backend.get(), batch});
            backends_.push_back(std::move(backend));
        }
    }

    LoadResult run(LoadPlan plan) {
        plan.lead_ns = 0;
        result_ = run_load(streams_, plan, TraceSink{records_.data(), &published_},
                           static_cast<std::int64_t>(records_.size()), stop_, clock_);
        return result_;
    }

    std::vector<Query> queries() const {
        std::vector<Query> out;
        for (std::int64_t i = 0; i < published_.load(); ++i) {
            const IterationRecord& r = records_[static_cast<std::size_t>(i)];
            out.push_back({(r.start_ns - result_.start_ns) / kUs, r.e2e_ns / kUs, r.queue_ns / kUs});
        }
        return out;
    }

    const IterationRecord& record(std::size_t i) const { return records_[i]; }
    std::atomic<std::int32_t>& stop() { return stop_; }
    const testing::ScriptedLog& log() const { return *log_; }

private:
    testing::VirtualClock clock_;
    std::shared_ptr<testing::ScriptedLog> log_ = std::make_shared<testing::ScriptedLog>();
    std::vector<std::unique_ptr<ScriptedBackend>> backends_;
    std::vector<StreamInstances> streams_;
    std::vector<IterationRecord> records_ = std::vector<IterationRecord>(1000);
    std::atomic<std::int64_t> published_{0};
    std::atomic<std::int32_t> stop_{0};
    LoadResult result_;
};

LoadPlan schedule(std::vector<std::int64_t> arrivals_us) {
    LoadPlan plan;
    for (auto& t : arrivals_us) t *= kUs;
    plan.schedule_ns = std::move(arrivals_us);
    return plan;
}

TEST(LoadEngine, ServerCountsTheWaitFromTheScheduledArrival) {
    Rig rig;
    rig.add_stream({{2 * kMs, kMs, kMs, kMs}});
    const LoadResult result = rig.run(schedule({0, 1000, 1500, 5000}));
    // q0 0->2; q1 arrives at 1, begins at 2 (waited 1), ends 3; q2 arrives 1.5, begins 3, ends 4; q3 on time.
    EXPECT_EQ(rig.queries(), (std::vector<Query>{{0, 2000, 0}, {1000, 2000, 1000}, {1500, 2500, 1500}, {5000, 1000, 0}}));
    EXPECT_EQ(result.scheduled, 4);
    EXPECT_EQ(result.issued, 4);
    EXPECT_EQ(result.completed, 4);
    EXPECT_EQ(result.inferences, 4);
    EXPECT_EQ(result.wall_ns, 6 * kMs);
    EXPECT_EQ(result.longest_wait_ns, 1500 * kUs);
    EXPECT_FALSE(result.fell_behind);
    EXPECT_EQ(rig.record(0).compute_ns, 2 * kMs) << "the backend's device times are kept";
}

TEST(LoadEngine, SeveralStreamsServeOneQueueInOrder) {
    Rig rig;
    rig.add_stream({{2 * kMs}});
    rig.add_stream({{2 * kMs}});
    rig.run(schedule({0, 1000, 1500, 5000}));
    // q0 on one stream 0->2, q1 on the other 1->3, q2 waits for the first free one (at 2), q3 on time.
    EXPECT_EQ(rig.queries(), (std::vector<Query>{{0, 2000, 0}, {1000, 2000, 0}, {1500, 2500, 500}, {5000, 2000, 0}}));
}

// The engine's clock, whose first sleep wakes 5 ms late: a worker the machine held up (the kernel or the
// hypervisor took its CPU) just as a query arrived.
class OversleepingClock final : public LoadClock {
public:
    explicit OversleepingClock(testing::VirtualClock& inner) : inner_(inner) {}
    std::int64_t now() override { return inner_.now(); }
    std::int64_t sleep_until(std::int64_t t_ns) override {
        return inner_.sleep_until(overslept_.exchange(true) ? t_ns : t_ns + 5 * kMs);
    }
    void wait(std::unique_lock<std::mutex>& lock, std::condition_variable& changed, const std::function<bool()>& ready,
              std::int64_t deadline_ns) override {
        inner_.wait(lock, changed, ready, deadline_ns);
    }
    void notify(std::condition_variable& changed) override { inner_.notify(changed); }
    void threads_start(int count) override { inner_.threads_start(count); }
    void thread_ends() override { inner_.thread_ends(); }

private:
    testing::VirtualClock& inner_;
    std::atomic<bool> overslept_{false};
};

TEST(LoadEngine, AQueryArrivingWhileOneWorkerIsHeldUpIsTakenByAnotherThatIsFree) {
    testing::VirtualClock clock;
    OversleepingClock engine_clock(clock);
    ScriptedBackend a({{kMs}}, clock), b({{kMs}}, clock);
    const std::vector<StreamInstances> streams = {{{&a, 1}}, {{&b, 1}}};
    std::vector<IterationRecord> records(10);
    std::atomic<std::int64_t> published{0};
    std::atomic<std::int32_t> stop{0};
    LoadPlan plan = schedule({1000, 2000, 3000, 4000});
    plan.lead_ns = 0;
    const LoadResult result = run_load(streams, plan, TraceSink{records.data(), &published}, 10, stop, engine_clock);
    // Both workers are free when q0 arrives; one of them wakes 5 ms late, and the other takes q0 and each query
    // after it on time. (Had a worker taken q0 before its arrival and then been held up, q0 would wait 5 ms.)
    ASSERT_EQ(result.completed, 4);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(records[i].queue_ns, 0) << "query " << i;
    EXPECT_EQ(result.longest_wait_ns, 0);
}

TEST(LoadEngine, TheBatcherWaitsForAFullBatchOrItsDelay) {
    Rig rig;
    rig.add_stream({{kMs}}, {1, 2, 4});
    LoadPlan plan = schedule({0, 200, 400, 3000, 3100});
    plan.batcher = true;
    plan.max_queue_delay_ns = kMs;
    const LoadResult result = rig.run(plan);
    // Batch 1: q0 waits its 1 ms delay; q0-q2 have arrived by then; they run on the batch-4 instance (one
    // sample of padding), 1 -> 2. Batch 2: q3 at 3.0; no more queries will come after q4 (3.1): it goes then,
    // on the batch-2 instance, 3.1 -> 4.1.
    EXPECT_EQ(rig.queries(),
              (std::vector<Query>{{0, 2000, 1000}, {200, 1800, 800}, {400, 1600, 600}, {3000, 1100, 100}, {3100, 1000, 0}}));
    EXPECT_EQ(result.inferences, 2);
    EXPECT_EQ(result.padded_samples, 1);
    const auto calls = rig.log().calls();
    ASSERT_EQ(calls.size(), 2u);
    EXPECT_EQ(calls[0].batch_size, 4);
    EXPECT_EQ(calls[1].batch_size, 2);
}

TEST(LoadEngine, TheBatcherGoesAsSoonAsTheBatchIsFull) {
    Rig rig;
    rig.add_stream({{kMs}}, {1, 2});
    LoadPlan plan = schedule({0, 100, 200, 300});
    plan.batcher = true;
    plan.max_queue_delay_ns = 10 * kMs;
    rig.run(plan);
    // A batch of 2 is full at q1's arrival (0.1): 0.1 -> 1.1; then q2, q3 (both there) at 1.1 -> 2.1.
    EXPECT_EQ(rig.queries(), (std::vector<Query>{{0, 1100, 100}, {100, 1000, 0}, {200, 1900, 900}, {300, 1800, 800}}));
}

TEST(LoadEngine, WithoutSmallerInstancesEveryBatchIsPadded) {
    Rig rig;
    rig.add_stream({{kMs}}, {4});  // a model whose batch is fixed: no smaller instance
    LoadPlan plan = schedule({0});
    plan.batcher = true;
    plan.max_queue_delay_ns = kMs;
    const LoadResult result = rig.run(plan);
    EXPECT_EQ(result.padded_samples, 3);
    EXPECT_EQ(rig.log().calls().at(0).batch_size, 4);
}

TEST(LoadEngine, MultiStreamQueriesAreTheirInferencesInSequence) {
    Rig rig;
    rig.add_stream({{kMs}});
    LoadPlan plan;
    plan.inferences_per_query = 2;  // samples_per_query 4 at batch 2
    plan.duration_ns = 5 * kMs;
    plan.min_queries = 1;
    const LoadResult result = rig.run(plan);
    // Each query: two 1 ms inferences; the next is issued when it completes, until 5 ms have passed.
    EXPECT_EQ(rig.queries(), (std::vector<Query>{{0, 2000, 0}, {2000, 2000, 0}, {4000, 2000, 0}}));
    EXPECT_EQ(result.inferences, 6);
    EXPECT_EQ(rig.record(0).compute_ns, 2 * kMs) << "a query's device time is its inferences' sum";
}

TEST(LoadEngine, MultiStreamInferencesRunOnEveryStream) {
    Rig rig;
    rig.add_stream({{kMs}});
    rig.add_stream({{kMs}});
    LoadPlan plan;
    plan.inferences_per_query = 2;
    plan.duration_ns = 3 * kMs;
    rig.run(plan);
    EXPECT_EQ(rig.queries(), (std::vector<Query>{{0, 1000, 0}, {1000, 1000, 0}, {2000, 1000, 0}}));
}

TEST(LoadEngine, ConcurrencyKeepsNInFlight) {
    Rig rig;
    rig.add_stream({{kMs}});
    LoadPlan plan;
    plan.clients = 3;
    plan.duration_ns = 4 * kMs;
    plan.min_queries = 1;
    const LoadResult result = rig.run(plan);
    // Three queries at 0 on one instance: served at 0, 1, 2; each completion issues the client's next.
    const std::vector<Query> expected = {{0, 1000, 0},    {0, 2000, 1000},    {0, 3000, 2000},
                                         {1000, 3000, 2000}, {2000, 3000, 2000}, {3000, 3000, 2000}};
    EXPECT_EQ(rig.queries(), expected);
    EXPECT_EQ(result.scheduled, 6);
    EXPECT_EQ(result.completed, 6);
}

TEST(LoadEngine, ConcurrencyWithTheBatcherBatchesTheClients) {
    Rig rig;
    rig.add_stream({{kMs}}, {1, 2, 4});
    LoadPlan plan;
    plan.clients = 4;
    plan.batcher = true;
    plan.max_queue_delay_ns = kMs;
    plan.duration_ns = 2 * kMs;
    const LoadResult result = rig.run(plan);
    // Four queries at 0 fill a batch at once; their four successors arrive together at 1, and so on.
    ASSERT_EQ(result.completed, 8);
    for (const Query& q : rig.queries()) EXPECT_EQ(q.e2e, 1000) << q;
    EXPECT_EQ(result.inferences, 2);
    EXPECT_EQ(result.padded_samples, 0);
}

TEST(LoadEngine, OfflineRunsEverythingFromTheStart) {
    Rig rig;
    rig.add_stream({{kMs}});
    rig.add_stream({{kMs}});
    const LoadResult result = rig.run(schedule({0, 0, 0, 0}));
    EXPECT_EQ(rig.queries(), (std::vector<Query>{{0, 1000, 0}, {0, 1000, 0}, {0, 2000, 1000}, {0, 2000, 1000}}));
    EXPECT_EQ(result.wall_ns, 2 * kMs);
}

TEST(LoadEngine, AServerThatFallsBehindEndsItsRun) {
    Rig rig;
    rig.add_stream({{kMs}});
    LoadPlan plan = schedule({0, 100, 200, 300, 400, 500, 600, 700, 800, 900});
    plan.fall_behind_ns = 2 * kMs;
    const LoadResult result = rig.run(plan);
    // Waits: q1 0.9, q2 1.8, q3 2.7 > 2: q3 is not begun, and the run ends.
    EXPECT_TRUE(result.fell_behind);
    EXPECT_EQ(result.scheduled, 10);
    EXPECT_EQ(result.issued, 3);
    EXPECT_EQ(result.completed, 3);
}

TEST(LoadEngine, AStopRequestEndsTheRun) {
    Rig rig;
    rig.add_stream({{kMs}});
    rig.stop() = 1;
    const LoadResult result = rig.run(schedule({0, 100}));
    EXPECT_TRUE(result.stopped);
    EXPECT_EQ(result.completed, 0);
}

class ThrowingBackend final : public Backend {
public:
    std::string name() const override { return "throwing"; }
    std::string version() const override { return "1"; }
    Capabilities capabilities() const override { return {}; }
    void load(const std::string&, const BenchmarkSpec&) override {}
    std::vector<TensorInfo> inputs() const override { return {}; }
    void prepare(std::span<const HostTensor>) override {}
    void infer(DeviceTimes&) override { throw std::runtime_error("device lost"); }
};

TEST(LoadEngine, ABackendErrorEndsTheRunAndIsThrown) {
    ThrowingBackend a, b;
    const std::vector<StreamInstances> streams = {{{&a, 1}}, {{&b, 1}}};
    std::vector<IterationRecord> records(10);
    std::atomic<std::int64_t> published{0};
    std::atomic<std::int32_t> stop{0};
    testing::VirtualClock clock;
    LoadPlan plan = schedule({0, 0, 0});
    EXPECT_THROW(run_load(streams, plan, TraceSink{records.data(), &published}, 10, stop, clock), std::runtime_error);
}

}  // namespace
}  // namespace inferbench::runner
