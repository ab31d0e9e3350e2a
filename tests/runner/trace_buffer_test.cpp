#include "runner/wire/trace_buffer.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

namespace inferbench::runner {
namespace {

TEST(TraceBuffer, PublishedRecordsAreVisibleThroughASecondMapping) {
    TraceBuffer owner = TraceBuffer::create(1000);
    EXPECT_EQ(owner.capacity(), 1000);
    EXPECT_TRUE(owner.published().empty());
    TraceBuffer worker = TraceBuffer::attach(dup(owner.fd()));
    worker.records()[0] = IterationRecord{100, 5, kNotMeasured, 1, 2, 3};
    worker.records()[1] = IterationRecord{200, 6};
    worker.header().published.store(2, std::memory_order_release);
    ASSERT_EQ(owner.published().size(), 2u);
    EXPECT_EQ(owner.published()[0].start_ns, 100);
    EXPECT_EQ(owner.published()[0].d2h_ns, 3);
    EXPECT_EQ(owner.published()[1].e2e_ns, 6);
}

TEST(TraceBuffer, RecordsSurviveAWorkerKilledMidRun) {
    TraceBuffer owner = TraceBuffer::create(100);
    const pid_t child = fork();
    if (child == 0) {
        TraceBuffer worker = TraceBuffer::attach(owner.fd());
        for (int i = 0; i < 42; ++i) {
            worker.records()[i] = IterationRecord{i, i + 1};
            worker.header().published.store(i + 1, std::memory_order_release);
        }
        raise(SIGKILL);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    ASSERT_EQ(owner.published().size(), 42u);
    EXPECT_EQ(owner.published()[41].e2e_ns, 42);
}

TEST(TraceBuffer, PublishedCountIsClampedToCapacity) {
    TraceBuffer owner = TraceBuffer::create(3);
    owner.header().published.store(10);
    EXPECT_EQ(owner.published().size(), 3u);
}

TEST(TraceBuffer, PrefaultTouchesWithinCapacityOnly) {
    TraceBuffer owner = TraceBuffer::create(10);
    owner.prefault(1'000'000);  // clamped: must not write past the mapping
    owner.prefault(-5);
    SUCCEED();
}

TEST(TraceBuffer, AttachRejectsABadDescriptor) { EXPECT_THROW(TraceBuffer::attach(-1), std::exception); }

}  // namespace
}  // namespace inferbench::runner
