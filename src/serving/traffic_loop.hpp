// The traffic of a serving cell: sends a workload's planned requests through a RequestPort under the cell's
// scenario (core/plan/scenario_settings' names) and collects every request as it ended, failed ones included.
//   single_stream  one request in flight: the next is sent when the last ended (closed loop).
//   concurrency    `concurrency` requests in flight: a slot that frees takes the next ready request (closed loop).
//   server         open loop: requests arrive at gamma-distributed gaps of mean 1/rate and shape burstiness
//                  (serving/arrival_schedule) and are sent at their arrival whatever is in flight; a late send
//                  keeps its arrival as scheduled_ns, so time spent waiting counts (no coordinated omission).
//   offline        open loop, every request arriving at the start.
// Multi-turn sessions: turn k + 1 is sent only after turn k ended. Closed loop: a free slot takes the first
// request (in workload order) whose previous turn ended; open loop: a turn is due at max(its arrival, the end
// of the previous turn), and that is its scheduled_ns.
// Warm-up: the workload's first warmup_requests are sent first (single_stream one at a time, concurrency N at a
// time, server and offline all at once), flagged warmup and waited for; the measured phase (its clock and
// schedule from 0) begins after them with the rest. The workload is never cycled: it holds exactly the requests
// a run may send, so a request is never sent twice (which a server's prefix cache would answer faster).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/plan/scenario_settings.hpp"
#include "core/serving.hpp"
#include "serving/request_port.hpp"
#include "serving/traffic_clock.hpp"

namespace inferbench::serving {

struct TrafficSettings {
    Scenario scenario = Scenario::concurrency;  // single_stream, concurrency, server or offline
    std::int64_t concurrency = 1;               // concurrency: requests in flight
    double rate = 1.0;                          // server: mean arrivals per second
    double burstiness = 1.0;                    // server: the gaps' gamma shape (1: Poisson arrivals)
    std::int64_t warmup_requests = 0;  // the workload's first ones, sent before the measured phase (all: warm-up only)
    std::int64_t max_requests = 0;     // measured requests sent at most; 0: the rest of the workload
    // No measured request is sent after this (from the measured phase's start); those in flight then are waited
    // for up to drain_ns, then cancelled. 0: no limit (each request ends by the port's own request timeout).
    std::int64_t duration_ns = 0;
    std::int64_t drain_ns = 60'000'000'000;
    std::uint64_t seed = 0;  // server: the arrival schedule's
};

// Why the loop stopped sending.
enum class TrafficStop {
    workload_done,  // every measured request of the workload was sent (and ended)
    request_limit,  // max_requests were sent
    duration,       // duration_ns passed
    interrupted,    // should_stop() said so; what was in flight was cancelled
};
std::string_view to_string(TrafficStop stop);

struct TrafficResult {
    // Every request sent, warm-ups included, in the order they ended; empty when TrafficHooks::on_finished took
    // them (the counts below hold either way).
    std::vector<ServedRequest> requests;
    TrafficStop stop = TrafficStop::workload_done;
    std::int64_t warmup_sent = 0;
    std::int64_t sent = 0;               // measured requests sent
    std::int64_t cancelled = 0;          // requests that ended as cancelled (the drain limit, or an interrupt)
    std::int64_t unanswered = 0;         // in flight still after cancel_all() and its polls (a port that lost them)
    std::int64_t measured_start_ns = 0;  // the measured phase's time 0 (after the warm-up)
    std::int64_t end_ns = 0;             // when the loop returned
};

struct TrafficHooks {
    std::function<bool()> should_stop;                            // an interrupt: asked between waits
    std::function<void(std::vector<ServedRequest>)> on_finished;  // each batch of ended requests, as it ends
};

// The longest the loop waits in one poll or sleep before it asks should_stop() again.
inline constexpr std::int64_t kTrafficPollSliceNs = 50'000'000;

// Nothing when the settings can drive a workload of `workload_size` requests; else one line saying what is wrong.
std::optional<std::string> traffic_problem(const TrafficSettings& settings, std::int64_t workload_size);

// Throws UserError for settings traffic_problem() refuses or a workload whose indices repeat.
TrafficResult run_traffic(RequestPort& port, TrafficClock& clock, std::span<const PlannedRequest> workload,
                          const TrafficSettings& settings, const TrafficHooks& hooks = {});

}  // namespace inferbench::serving
