#include "serving/traffic_loop.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

#include "core/error.hpp"
#include "serving/arrival_schedule.hpp"
#include "serving/workload.hpp"

namespace inferbench::serving {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// Time moves only when the loop sleeps or a poll waits, so every send and end time is exact.
class VirtualClock final : public TrafficClock {
public:
    std::int64_t now() override { return now_; }
    void sleep_until(std::int64_t t_ns) override { now_ = std::max(now_, t_ns); }
    std::int64_t now_ = 1'000 * kMs;
};

// A server on the virtual clock: each request takes latency(request) and ends with outcome(request).
class ScriptedPort final : public RequestPort {
public:
    explicit ScriptedPort(VirtualClock& clock) : clock_(clock) {}

    std::function<std::int64_t(const PlannedRequest&)> latency = [](const PlannedRequest&) { return 10 * kMs; };
    std::function<RequestOutcome(const PlannedRequest&)> outcome = [](const PlannedRequest&) {
        return RequestOutcome::ok;
    };
    std::int64_t send_cost_ns = 0;  // a slow client: each send takes this long

    void send(const PlannedRequest& request, std::int64_t scheduled_ns, bool warmup) override {
        ServedRequest r;
        r.index = request.index;
        r.warmup = warmup;
        r.scheduled_ns = scheduled_ns;
        r.sent_ns = clock_.now_;
        r.end_ns = clock_.now_ + latency(request);
        r.outcome = outcome(request);
        in_flight_at_send.push_back(in_flight());
        flight_.push_back(r);
        sends.push_back(r);
        max_in_flight = std::max(max_in_flight, in_flight());
        clock_.now_ += send_cost_ns;
    }

    std::vector<ServedRequest> poll(std::int64_t wait_ns) override {
        ++polls;
        std::int64_t earliest = clock_.now_ + wait_ns;
        for (const auto& r : flight_) earliest = std::min(earliest, r.end_ns);
        clock_.now_ = std::max(clock_.now_, earliest);
        std::vector<ServedRequest> ended;
        for (auto it = flight_.begin(); it != flight_.end();) {
            if (it->end_ns <= clock_.now_) {
                ended.push_back(*it);
                it = flight_.erase(it);
            } else {
                ++it;
            }
        }
        return ended;
    }

    std::size_t in_flight() const override { return flight_.size(); }

    void cancel_all() override {
        for (auto& r : flight_) {
            r.end_ns = clock_.now_;
            r.outcome = RequestOutcome::cancelled;
        }
    }

    std::vector<ServedRequest> sends;
    std::vector<std::size_t> in_flight_at_send;
    std::size_t max_in_flight = 0;
    int polls = 0;

private:
    VirtualClock& clock_;
    std::vector<ServedRequest> flight_;
};

std::vector<PlannedRequest> workload(std::int64_t count, std::int64_t turns = 1) {
    WorkloadSettings s;
    s.input_tokens = 4;
    s.output_tokens = 2;
    s.vocab = 1000;
    s.requests = count;
    s.turns = turns;
    return make_workload(s);
}

TrafficSettings closed(std::int64_t concurrency) {
    TrafficSettings t;
    t.scenario = Scenario::concurrency;
    t.concurrency = concurrency;
    return t;
}

std::map<std::int64_t, ServedRequest> by_index(const std::vector<ServedRequest>& requests) {
    std::map<std::int64_t, ServedRequest> out;
    for (const auto& r : requests) out[r.index] = r;
    return out;
}

TEST(TrafficLoop, ClosedLoopKeepsExactlyNInFlight) {
    VirtualClock clock;
    ScriptedPort port(clock);
    // 10 to 13 ms: no two requests end at the same time, so each end frees one slot
    port.latency = [](const PlannedRequest& r) { return (10 + r.index % 4) * kMs; };
    const auto requests = workload(20);
    const auto result = run_traffic(port, clock, requests, closed(4));
    EXPECT_EQ(result.stop, TrafficStop::workload_done);
    EXPECT_EQ(result.sent, 20);
    ASSERT_EQ(result.requests.size(), 20U);
    EXPECT_EQ(port.max_in_flight, 4U);
    // the first four fill the slots; every later send takes the slot one ending request freed, at once
    for (std::size_t i = 4; i < port.in_flight_at_send.size(); ++i) EXPECT_EQ(port.in_flight_at_send[i], 3U) << i;
    const auto served = by_index(result.requests);
    std::vector<std::int64_t> ends;
    for (const auto& [index, r] : served) ends.push_back(r.end_ns);
    std::sort(ends.begin(), ends.end());
    for (std::size_t i = 4; i < port.sends.size(); ++i) {
        EXPECT_EQ(port.sends[i].sent_ns, ends[i - 4]) << i;
        EXPECT_EQ(port.sends[i].scheduled_ns, port.sends[i].sent_ns);
    }
    // equal latencies: five waves of four
    VirtualClock clock2;
    ScriptedPort port2(clock2);
    const auto waves = run_traffic(port2, clock2, requests, closed(4));
    EXPECT_EQ(waves.end_ns - waves.measured_start_ns, 50 * kMs);
    EXPECT_EQ(port2.max_in_flight, 4U);
}

TEST(TrafficLoop, SingleStreamSendsOneAfterAnother) {
    VirtualClock clock;
    ScriptedPort port(clock);
    TrafficSettings t;
    t.scenario = Scenario::single_stream;
    const auto result = run_traffic(port, clock, workload(5), t);
    EXPECT_EQ(port.max_in_flight, 1U);
    for (std::size_t i = 1; i < port.sends.size(); ++i) EXPECT_EQ(port.sends[i].sent_ns, port.sends[i - 1].end_ns);
    EXPECT_EQ(result.sent, 5);
}

TEST(TrafficLoop, OpenLoopSendsAtTheScheduleWhateverIsInFlight) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.latency = [](const PlannedRequest&) { return 500 * kMs; };  // far slower than the arrivals
    TrafficSettings t;
    t.scenario = Scenario::server;
    t.rate = 50;
    t.burstiness = 0.5;
    t.seed = 3;
    const auto result = run_traffic(port, clock, workload(30), t);
    const auto offsets = arrival_offsets(50, 0.5, 30, 3);
    ASSERT_EQ(port.sends.size(), 30U);
    for (std::size_t i = 0; i < 30; ++i) {
        EXPECT_EQ(port.sends[i].index, static_cast<std::int64_t>(i));
        EXPECT_EQ(port.sends[i].scheduled_ns, result.measured_start_ns + offsets[i]);
        EXPECT_EQ(port.sends[i].sent_ns, port.sends[i].scheduled_ns);
    }
    EXPECT_GT(port.max_in_flight, 10U);
}

TEST(TrafficLoop, ALateClientKeepsTheArrivalAsScheduled) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.send_cost_ns = 30 * kMs;  // slower to send than the arrivals come
    TrafficSettings t;
    t.scenario = Scenario::server;
    t.rate = 100;
    const auto result = run_traffic(port, clock, workload(20), t);
    const auto offsets = arrival_offsets(100, 1.0, 20, 0);
    for (std::size_t i = 0; i < 20; ++i) EXPECT_EQ(port.sends[i].scheduled_ns, result.measured_start_ns + offsets[i]);
    EXPECT_GT(port.sends.back().sent_ns - port.sends.back().scheduled_ns, 300 * kMs);
}

TEST(TrafficLoop, OfflineSendsEverythingAtTheStart) {
    VirtualClock clock;
    ScriptedPort port(clock);
    TrafficSettings t;
    t.scenario = Scenario::offline;
    const auto result = run_traffic(port, clock, workload(25), t);
    EXPECT_EQ(port.max_in_flight, 25U);
    for (const auto& r : port.sends) EXPECT_EQ(r.sent_ns, result.measured_start_ns);
    EXPECT_EQ(result.requests.size(), 25U);
}

TEST(TrafficLoop, WarmupGoesFirstFlaggedAndWaitedFor) {
    VirtualClock clock;
    ScriptedPort port(clock);
    auto t = closed(2);
    t.warmup_requests = 3;
    const auto result = run_traffic(port, clock, workload(10), t);
    EXPECT_EQ(result.warmup_sent, 3);
    EXPECT_EQ(result.sent, 7);
    const auto served = by_index(result.requests);
    std::int64_t last_warmup_end = 0;
    for (std::int64_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(served.at(i).warmup);
        last_warmup_end = std::max(last_warmup_end, served.at(i).end_ns);
    }
    EXPECT_EQ(result.measured_start_ns, last_warmup_end);
    for (std::int64_t i = 3; i < 10; ++i) {
        EXPECT_FALSE(served.at(i).warmup);
        EXPECT_GE(served.at(i).sent_ns, last_warmup_end);
    }
}

TEST(TrafficLoop, AWarmupOfTheWholeWorkloadMeasuresNothing) {
    VirtualClock clock;
    ScriptedPort port(clock);
    auto t = closed(2);
    t.warmup_requests = 5;
    const auto result = run_traffic(port, clock, workload(5), t);
    EXPECT_EQ(result.stop, TrafficStop::workload_done);
    EXPECT_EQ(result.warmup_sent, 5);
    EXPECT_EQ(result.sent, 0);
    ASSERT_EQ(result.requests.size(), 5U);
    EXPECT_TRUE(
        std::all_of(result.requests.begin(), result.requests.end(), [](const ServedRequest& r) { return r.warmup; }));
    EXPECT_EQ(port.max_in_flight, 2U);
}

TEST(TrafficLoop, DurationStopsSendingAndInFlightRequestsAreWaitedFor) {
    VirtualClock clock;
    ScriptedPort port(clock);
    auto t = closed(2);
    t.duration_ns = 35 * kMs;
    const auto result = run_traffic(port, clock, workload(100), t);
    EXPECT_EQ(result.stop, TrafficStop::duration);
    EXPECT_EQ(result.sent, 8);  // sends at 0, 10, 20 and 30 ms, two each
    EXPECT_EQ(result.cancelled, 0);
    EXPECT_EQ(result.requests.size(), 8U);
    EXPECT_EQ(result.end_ns - result.measured_start_ns, 40 * kMs);
}

TEST(TrafficLoop, DrainLimitCancelsWhatIsStillInFlight) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.latency = [](const PlannedRequest& r) { return r.index == 0 ? 10 * kMs : 10'000 * kMs; };
    auto t = closed(3);
    t.duration_ns = 5 * kMs;
    t.drain_ns = 20 * kMs;
    const auto result = run_traffic(port, clock, workload(100), t);
    EXPECT_EQ(result.stop, TrafficStop::duration);
    EXPECT_EQ(result.sent, 3);
    EXPECT_EQ(result.cancelled, 2);
    EXPECT_EQ(result.unanswered, 0);
    EXPECT_EQ(result.requests.size(), 3U);
    EXPECT_EQ(result.end_ns - result.measured_start_ns, 25 * kMs);
    EXPECT_EQ(by_index(result.requests).at(1).outcome, RequestOutcome::cancelled);
}

TEST(TrafficLoop, RequestLimitStopsAtMaxRequests) {
    VirtualClock clock;
    ScriptedPort port(clock);
    auto t = closed(2);
    t.max_requests = 5;
    const auto result = run_traffic(port, clock, workload(20), t);
    EXPECT_EQ(result.stop, TrafficStop::request_limit);
    EXPECT_EQ(result.sent, 5);
    EXPECT_EQ(result.requests.size(), 5U);
    t.max_requests = 20;  // the whole workload: it ran out, not the limit
    EXPECT_EQ(run_traffic(port, clock, workload(20), t).stop, TrafficStop::workload_done);
}

TEST(TrafficLoop, ClosedLoopSendsATurnOnlyAfterTheTurnBefore) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.latency = [](const PlannedRequest& r) { return (5 + r.index % 4) * kMs; };
    const auto requests = workload(12, 3);  // 4 sessions of 3 turns
    const auto result = run_traffic(port, clock, requests, closed(3));
    const auto served = by_index(result.requests);
    ASSERT_EQ(served.size(), 12U);
    for (const auto& r : requests) {
        if (r.turn > 0) {
            EXPECT_GE(served.at(r.index).sent_ns, served.at(r.index - 1).end_ns) << r.index;
        }
    }
    EXPECT_EQ(port.max_in_flight, 3U);  // three sessions at a time keep the slots full
}

TEST(TrafficLoop, OpenLoopTurnIsDueAtItsArrivalOrThePreviousEnd) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.latency = [](const PlannedRequest&) { return 300 * kMs; };
    TrafficSettings t;
    t.scenario = Scenario::server;
    t.rate = 20;
    const auto requests = workload(9, 3);
    const auto result = run_traffic(port, clock, requests, t);
    const auto offsets = arrival_offsets(20, 1.0, 9, 0);
    const auto served = by_index(result.requests);
    for (const auto& r : requests) {
        const std::int64_t arrival = result.measured_start_ns + offsets[static_cast<std::size_t>(r.index)];
        const std::int64_t due = r.turn == 0 ? arrival : std::max(arrival, served.at(r.index - 1).end_ns);
        EXPECT_EQ(served.at(r.index).scheduled_ns, due) << r.index;
        EXPECT_EQ(served.at(r.index).sent_ns, due) << r.index;
    }
}

TEST(TrafficLoop, InterruptCancelsWhatIsInFlight) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.latency = [](const PlannedRequest&) { return 1'000 * kMs; };
    int asked = 0;
    TrafficHooks hooks;
    hooks.should_stop = [&] { return ++asked > 3; };
    const auto result = run_traffic(port, clock, workload(50), closed(4), hooks);
    EXPECT_EQ(result.stop, TrafficStop::interrupted);
    EXPECT_EQ(result.sent, 4);
    EXPECT_EQ(result.cancelled, 4);
    EXPECT_EQ(result.requests.size(), 4U);
    EXPECT_EQ(port.in_flight(), 0U);
}

TEST(TrafficLoop, APortThatFailsEveryRequestStillEnds) {
    VirtualClock clock;
    ScriptedPort port(clock);
    port.latency = [](const PlannedRequest&) { return 0; };
    port.outcome = [](const PlannedRequest&) { return RequestOutcome::connect_failed; };
    auto t = closed(8);
    t.duration_ns = 1'000 * kMs;
    t.warmup_requests = 2;
    const auto result = run_traffic(port, clock, workload(500), t);
    EXPECT_EQ(result.stop, TrafficStop::workload_done);
    EXPECT_EQ(result.requests.size(), 500U);
    EXPECT_TRUE(std::all_of(result.requests.begin(), result.requests.end(),
                            [](const ServedRequest& r) { return r.outcome == RequestOutcome::connect_failed; }));
    EXPECT_LT(port.polls, 1000);
}

TEST(TrafficLoop, OnFinishedTakesEveryRequestInBatches) {
    VirtualClock clock;
    ScriptedPort port(clock);
    std::vector<std::size_t> batches;
    std::int64_t total = 0;
    TrafficHooks hooks;
    hooks.on_finished = [&](std::vector<ServedRequest> batch) {
        batches.push_back(batch.size());
        total += static_cast<std::int64_t>(batch.size());
    };
    const auto result = run_traffic(port, clock, workload(12), closed(4), hooks);
    EXPECT_TRUE(result.requests.empty());
    EXPECT_EQ(total, 12);
    EXPECT_EQ(batches, (std::vector<std::size_t>{4, 4, 4}));
}

TEST(TrafficLoop, RefusesSettingsAndWorkloadsItCannotDrive) {
    const auto requests = workload(4);
    TrafficSettings t;
    t.scenario = Scenario::multi_stream;
    EXPECT_NE(traffic_problem(t, 4).value_or("").find("multi_stream"), std::string::npos);
    t = closed(0);
    EXPECT_TRUE(traffic_problem(t, 4).has_value());
    t = closed(1);
    t.warmup_requests = 5;
    EXPECT_NE(traffic_problem(t, 4).value_or("").find("warmup_requests"), std::string::npos);
    t.warmup_requests = 0;
    t.scenario = Scenario::server;
    t.rate = 0;
    EXPECT_TRUE(traffic_problem(t, 4).has_value());
    VirtualClock clock;
    ScriptedPort port(clock);
    EXPECT_THROW(run_traffic(port, clock, requests, t), UserError);
    auto twice = requests;
    twice[1].index = 0;
    EXPECT_THROW(run_traffic(port, clock, twice, closed(1)), UserError);
    EXPECT_EQ(to_string(TrafficStop::request_limit), "request_limit");
}

}  // namespace
}  // namespace inferbench::serving

namespace inferbench::serving {
namespace {

TEST(SteadyTrafficClock, SleepsUntilTheTimeAndNotForAPastOne) {
    SteadyTrafficClock clock;
    const std::int64_t start = clock.now();
    clock.sleep_until(start + 2 * kMs);  // below and above the spin threshold
    EXPECT_GE(clock.now(), start + 2 * kMs);
    const std::int64_t at = clock.now();
    clock.sleep_until(at + SteadyTrafficClock::kSpinNs / 2);
    EXPECT_GE(clock.now(), at + SteadyTrafficClock::kSpinNs / 2);
    const std::int64_t before = clock.now();
    clock.sleep_until(before - 1'000 * kMs);
    EXPECT_LT(clock.now() - before, 1'000 * kMs);  // at once (bounded loosely: a busy machine may preempt us)
}

}  // namespace
}  // namespace inferbench::serving
