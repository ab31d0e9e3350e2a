// MLPerf LoadGen's early stopping (MLPerf Inference rules, appendix "Early Stopping Criterion"), as pure
// functions. A query is "underlatency" when it meets the latency bound; a system meets the bound with
// probability p. Having seen t overlatency queries, h underlatency ones are enough when a minimally
// failing system (one meeting the bound with probability p - d) would show at most t overlatency queries
// among h + t with odds below 1 - c:  I(p - d; h, t + 1) < 1 - c,  I the regularized incomplete beta
// function. LoadGen uses c = 0.99 and d = 0, as here.
//   single_stream, multi_stream: the largest t with h(t) + t <= n queries; the t - 1 slowest are
//       discarded and the slowest left is the percentile's estimate (at least h(1) + 1 queries needed:
//       64 for p90, 662 for p99).
//   server: t = the queries over the bound; the run is long enough when n >= h(t) + t.
// Percentiles here are LoadGen's: sorted[floor(n p)], the (floor(n p) + 1)-th smallest.
#pragma once

#include <cstdint>
#include <span>

#include "core/statistics/order_statistics.hpp"

namespace inferbench::early_stopping {

inline constexpr double kConfidence = 0.99;
inline constexpr double kTolerance = 0.0;

// The odds that a system meeting the bound with probability p - d shows at most t overlatency queries
// among h + t: I(p - d; h, t + 1) (core/statistics/confidence: incomplete_beta).
double odds(std::int64_t h, std::int64_t t, double p, double d = kTolerance);

// The fewest underlatency queries h with odds(h, t, p, d) < 1 - c.
std::int64_t min_passing_queries(std::int64_t t, double p, double c = kConfidence, double d = kTolerance);

// The early-stopping estimate of percentile p of n latencies sorted ascending (single_stream, multi_stream).
struct PercentileEstimate {
    bool enough = false;             // n >= queries_needed
    std::int64_t queries_needed = 0;  // h(1) + 1
    std::int64_t discarded = 0;      // t - 1 slowest queries left out
    std::int64_t estimate_ns = 0;    // the slowest left; 0 when not enough
};
PercentileEstimate percentile_estimate(const SortedValues& sorted_ns, double p, double c = kConfidence);

// Whether a server run processed enough queries for its overlatency count (server).
struct ServerCheck {
    std::int64_t overlatency = 0;     // queries over the bound
    std::int64_t queries_needed = 0;  // h(t) + t
    bool satisfied = false;           // queries >= queries_needed
};
ServerCheck server_check(std::int64_t queries, std::int64_t overlatency, double p, double c = kConfidence);

// LoadGen's percentile of latencies sorted ascending: sorted[floor(n p)] (0 for none).
std::int64_t loadgen_percentile(const SortedValues& sorted_ns, double p);

}  // namespace inferbench::early_stopping
