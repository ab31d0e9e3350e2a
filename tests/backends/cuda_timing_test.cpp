// The shared CUDA event timing against a fake runtime table: which events are recorded around which stage,
// that the stream is drained before any event is read, the spans that come back, and CUDA's errors.
#include "backends/cuda_timing.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace inferbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// A stream whose work takes the time the test says: each recorded event is stamped with the stream's clock.
struct FakeStream {
    std::vector<std::string> log;           // what happened, in order
    std::map<std::intptr_t, float> stamps;  // event -> its time on the stream, in ms
    float clock_ms = 0.0f;
    std::intptr_t next_event = 1;
    int live_events = 0;
    int fail_record = 0;  // the status cudaEventRecord returns
};
FakeStream* g_stream = nullptr;

cuda::Stream stream_handle() { return reinterpret_cast<cuda::Stream>(std::intptr_t{77}); }
std::intptr_t id(cuda::Event event) { return reinterpret_cast<std::intptr_t>(event); }

cuda::RuntimeTable fake_table() {
    cuda::RuntimeTable t{};
    t.event_create = [](cuda::Event* event) {
        *event = reinterpret_cast<cuda::Event>(g_stream->next_event++);
        ++g_stream->live_events;
        return 0;
    };
    t.event_destroy = [](cuda::Event) {
        --g_stream->live_events;
        return 0;
    };
    t.event_record = [](cuda::Event event, cuda::Stream stream) {
        if (g_stream->fail_record != 0) return g_stream->fail_record;
        if (stream != stream_handle()) return 400;  // cudaErrorInvalidResourceHandle
        g_stream->stamps[id(event)] = g_stream->clock_ms;
        g_stream->log.push_back("event " + std::to_string(id(event)));
        return 0;
    };
    t.stream_synchronize = [](cuda::Stream) {
        g_stream->log.push_back("sync");
        return 0;
    };
    t.event_elapsed_time = [](float* ms, cuda::Event from, cuda::Event to) {
        if (g_stream->log.empty() || g_stream->log.back() != "sync") return 600;  // cudaErrorNotReady
        *ms = g_stream->stamps.at(id(to)) - g_stream->stamps.at(id(from));
        return 0;
    };
    t.get_error_string = [](int status) { return status == 400 ? "invalid resource handle" : "some error"; };
    return t;
}

class IterationTimerTest : public ::testing::Test {
protected:
    void SetUp() override { g_stream = &stream_; }
    void TearDown() override { g_stream = nullptr; }
    // A stage that takes `ms` on the stream.
    auto stage(std::string name, float ms) {
        return [this, name, ms] {
            stream_.log.push_back(name);
            stream_.clock_ms += ms;
        };
    }
    FakeStream stream_;
    const cuda::RuntimeTable table_ = fake_table();
};

TEST_F(IterationTimerTest, TimesCopiesAndComputeBetweenFourEvents) {
    IterationTimer timer(table_, stream_handle(), true);
    const DeviceTimes times = timer.time(stage("h2d", 0.25f), stage("compute", 1.5f), stage("d2h", 0.125f));
    EXPECT_THAT(stream_.log, ElementsAre("event 1", "h2d", "event 2", "compute", "event 3", "d2h", "event 4", "sync"));
    EXPECT_EQ(times.h2d_ns, 250'000);
    EXPECT_EQ(times.compute_ns, 1'500'000);
    EXPECT_EQ(times.d2h_ns, 125'000);
    EXPECT_GE(times.enqueue_ns, 0);
}

TEST_F(IterationTimerTest, DeviceResidentRunsNoCopiesAndMeasuresComputeOnly) {
    IterationTimer timer(table_, stream_handle(), false);
    const DeviceTimes times = timer.time(stage("h2d", 0.25f), stage("compute", 2.0f), stage("d2h", 0.125f));
    EXPECT_THAT(stream_.log, ElementsAre("event 2", "compute", "event 3", "sync"));
    EXPECT_EQ(times.compute_ns, 2'000'000);
    EXPECT_EQ(times.h2d_ns, kNotMeasured);
    EXPECT_EQ(times.d2h_ns, kNotMeasured);
    EXPECT_GE(times.enqueue_ns, 0);
}

TEST_F(IterationTimerTest, KeepsItsEventsFromOneIterationToTheNext) {
    {
        IterationTimer timer(table_, stream_handle(), true);
        EXPECT_EQ(stream_.live_events, 4);
        for (int i = 0; i < 3; ++i) {
            stream_.log.clear();
            const DeviceTimes times = timer.time(stage("h2d", 0.5f), stage("compute", 1.0f), stage("d2h", 0.5f));
            EXPECT_EQ(times.compute_ns, 1'000'000) << "iteration " << i;
        }
        EXPECT_EQ(stream_.next_event, 5) << "no event made after the first four";
    }
    EXPECT_EQ(stream_.live_events, 0) << "the events go with the timer";
}

TEST_F(IterationTimerTest, ACudaErrorNamesTheCall) {
    IterationTimer timer(table_, stream_handle(), true);
    stream_.fail_record = 400;
    EXPECT_THAT([&] { timer.time(stage("h2d", 0), stage("compute", 0), stage("d2h", 0)); },
                ThrowsMessage<std::runtime_error>(HasSubstr("CUDA cudaEventRecord failed: invalid resource handle")));
}

}  // namespace
}  // namespace inferbench
