// LoadGen's verdict on a run of a scenario (core/plan/scenario_settings.hpp), as a pure function of its query
// latencies and what the run says of its schedule: VALID or INVALID with the reasons, and the
// early-stopping estimates (core/statistics/early_stopping.hpp). The summary judges stored runs with it, and the
// server's find_peak judges each of its steps with it, so both say the same.
//   single_stream  VALID with enough queries for the p90 early-stopping estimate (64); p99's too, where
//                  there are enough (662).
//   multi_stream   VALID with enough queries for the p99 estimate (662).
//   server         VALID when the p99 (LoadGen's rank) is within latency_bound, early stopping is satisfied
//                  at 99% confidence for the queries over the bound, every scheduled query was issued
//                  (the system kept up), and the schedule covered the duration.
//   offline, concurrency: no verdict (throughput and latency only).
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "core/statistics/order_statistics.hpp"
#include <string>
#include <vector>

#include "core/statistics/early_stopping.hpp"
#include "core/plan/scenario_settings.hpp"

namespace inferbench {

// What a run says of its queries besides their latencies (stored as scenario metrics).
struct ScenarioFacts {
    std::int64_t scheduled = 0;          // queries the schedule held (server) or clients issued
    std::int64_t issued = 0;             // queries the backend began
    bool fell_behind = false;            // ended early: a query waited too long for the backend
    std::int64_t schedule_span_ns = -1;  // the last scheduled arrival's offset; -1 unknown
    std::int64_t duration_ns = 0;        // the cell's duration setting
    std::int64_t fastest_service_ns = -1;  // the shortest time the backend took for a query; -1 unknown
};

struct ScenarioVerdict {
    std::optional<bool> valid;             // nothing: the scenario has no verdict
    std::vector<std::string> reasons;      // why INVALID
    std::optional<double> percentile;      // the scenario's target percentile (0.90, 0.99)
    std::int64_t percentile_ns = 0;        // LoadGen's value of it
    std::optional<early_stopping::PercentileEstimate> estimate;      // single_stream p90, multi_stream p99
    std::optional<early_stopping::PercentileEstimate> estimate_p99;  // single_stream: p99's too
    std::optional<early_stopping::ServerCheck> server;               // server
};

// `sorted_latencies_ns`: every completed query's latency, ascending.
ScenarioVerdict judge_scenario(const ScenarioSettings& settings, const SortedValues& sorted_latencies_ns,
                               const ScenarioFacts& facts);

// The name of LoadGen's percentile wherever it is shown beside the interpolated one (core/statistics/statistics: p99
// by linear interpolation, which can differ from sorted[floor(n p)] near the tail): "p99 (LoadGen rank)".
std::string rank_percentile_name(double p);

// "VALID", "INVALID", or "" where the scenario has no verdict.
std::string verdict_word(const ScenarioVerdict& verdict);

}  // namespace inferbench
