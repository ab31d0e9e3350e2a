// A serving sweep: the cells of one server, model and workload that differ only in the load they offered (a
// concurrency level of a closed loop, or the request rate of an open loop), one SweepPoint each, read as one curve.
// What a sweep shows, each defined here once and computed by pure functions:
//   Pareto front   the points no other point beats in both output tokens/s per user and output tokens/s per GPU
//                  (per server where the GPU count is unknown): the trade-off between interactivity and cost.
//   goodput knee   the highest load whose goodput fraction still meets the target, every lower load meeting it too.
//   saturation     the load from which more load no longer buys output tokens/s, while TTFT grows.
// The thresholds are in `limits` below, each with its reason.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/serving_metrics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

namespace limits {
// The goodput target of the knee where the plan sets none: 99% of requests meeting every objective, the share
// MLPerf's LLM Server scenario holds TTFT and TPOT to (its constraints are 99th percentiles).
inline constexpr double kGoodputTarget = 0.99;
// Saturation: from one load to a higher one, output tokens/s grows by less than a fifth of the load's own
// relative growth (doubling the concurrency, +100%, buys under +20% tokens/s). Below saturation a server's
// throughput grows about as fast as its load (elasticity near 1); a fifth of that is well above the few percent
// run-to-run noise of a busy host and below any regime where adding load still pays.
inline constexpr double kSaturationGainShare = 0.2;
// ... while the median TTFT at the next load is at least 10% above this load's: requests wait longer for their
// first token (queueing) instead of the server doing more work. 10% is five times the latency change the
// throttling rule takes for noise (findings' kLatencyChangeFraction, 2%).
inline constexpr double kSaturationTtftGrowth = 0.10;
}  // namespace limits

// A serving cell: one of the `openai` backend (core/plan/plan's kServingBackend), whatever it stored.
bool is_serving(const store::BenchmarkRecord& benchmark);

// What a sweep varies.
enum class LoadKind { concurrency, request_rate };
std::string_view to_string(LoadKind kind);  // "concurrency", "request rate"
std::string_view load_unit(LoadKind kind);  // "requests in flight", "requests/s"
std::string load_text(LoadKind kind, double load);  // "concurrency 4", "2.5 requests/s"

// One cell of a sweep: its load and what the cell's requests measured (analysis/serving_metrics defines each).
// Every figure may be unknown (no request finished, no SLOs, the GPU count not recorded): unknown is never 0.
struct SweepPoint {
    std::int64_t benchmark_id = 0;
    double load = 0;  // the concurrency level, or the requests/s offered
    std::optional<double> user_tokens_per_s;    // output tokens/s per user (per request)
    std::optional<double> system_tokens_per_s;  // output tokens/s of the whole server
    std::optional<std::int64_t> gpus;           // the GPUs the server used; unknown where not recorded
    std::optional<double> goodput_fraction;     // requests meeting every objective / requests sent (errors count)
    std::optional<double> ttft_p50_ns, ttft_p99_ns;
    std::optional<double> tpot_p50_ns, tpot_p99_ns;
};

// System output tokens/s over the GPUs the server used; unknown where either is (never a guess of one GPU).
std::optional<double> tokens_per_s_per_gpu(const SweepPoint& point);

// The indices of the points in ascending load (the order every function below reads them in). Throws UserError
// where two points have the same load or a load is not above 0: they are not one sweep.
std::vector<std::size_t> load_order(std::span<const SweepPoint> points);

// The throughput axis a Pareto front is read on: per GPU where every point knows its GPU count, else per server
// (a sweep is one server's, so both give the same front; per GPU is what compares servers of different sizes).
enum class ThroughputAxis { per_gpu, per_server };
std::string_view to_string(ThroughputAxis axis);  // "output tokens/s per GPU", "output tokens/s per server"
ThroughputAxis throughput_axis(std::span<const SweepPoint> points);
std::optional<double> throughput_on(ThroughputAxis axis, const SweepPoint& point);

// A point is on the front when no other point has at least its tokens/s per user and at least its throughput on
// the axis, and more of one of them. Points missing either value are not placed (left_out).
struct ParetoFront {
    ThroughputAxis axis = ThroughputAxis::per_server;
    std::vector<std::size_t> points;    // indices into the points given, in ascending tokens/s per user
    std::vector<std::size_t> left_out;  // indices of the points without both values
};
ParetoFront pareto_front(std::span<const SweepPoint> points);

// The goodput knee, with the points in ascending load: the highest load L such that every point at a load up to L
// has a known goodput fraction >= target. A point past L that meets the target again does not move it: the knee
// is where goodput first falls. No knee where the lowest load misses the target or its goodput is unknown.
struct GoodputKnee {
    double target = limits::kGoodputTarget;
    std::optional<std::size_t> point;  // index into the points given
    // The next higher load, which missed the target (or whose goodput is unknown); none where the target held
    // at every load: the knee is then at or beyond the highest load tried, a lower bound.
    std::optional<std::size_t> next;
    std::string why_none;  // where there is no knee: the lowest load's goodput and the target, or "unknown"
};
GoodputKnee goodput_knee(std::span<const SweepPoint> points, double target = limits::kGoodputTarget);

// Saturation, with the points in ascending load that know system tokens/s and the median TTFT: the lowest load L
// such that (1) no higher load's system tokens/s is above L's by kSaturationGainShare of that load's relative
// growth over L or more, and (2) the median TTFT at the next higher load is above L's by kSaturationTtftGrowth
// or more. None where no load qualifies, or fewer than two points know both figures.
struct Saturation {
    std::size_t point = 0;  // index into the points given: the saturating load
    std::size_t next = 0;   // the next higher load that shows it
    double load_growth = 0;        // (next load - load) / load
    double throughput_growth = 0;  // (next system tokens/s - this one's) / this one's; may be negative
    double ttft_growth = 0;        // (next median TTFT - this one's) / this one's
    double peak_tokens_per_s = 0;  // the highest system tokens/s of the sweep
};
std::optional<Saturation> saturation(std::span<const SweepPoint> points);

// A serving cell as a sweep reads it: its row, its summary and the GPUs its server used (server_metrics::kGpus;
// nothing: unknown).
struct ServingCell {
    store::BenchmarkRecord benchmark;
    const ServingSummary* serving = nullptr;
    std::optional<std::int64_t> gpus;
};

// The cell's load and what it measured: tokens/s per user is the median over its requests (the median user's),
// TTFT and TPOT their p50 and p99; the goodput fraction where an SLO is set, else the share of requests that
// ended ok (every request is judged against "answered in full"). Nothing where the cell's stored scenario is
// neither a concurrency level nor an open-loop rate (scenario `concurrency` or `server`).
std::optional<std::pair<LoadKind, SweepPoint>> sweep_point(const ServingCell& cell);

// One sweep: what its cells share, and one point per load.
struct ServingSweep {
    std::string name;  // "llama-tiny openai cpu fp32, concurrency" (+ options, ", run 3")
    LoadKind kind = LoadKind::concurrency;
    std::vector<SweepPoint> points;  // ascending load
};

// The cells grouped into sweeps: same run, model, backend, device, precision, batch size, token lengths, load kind
// and variant once the load's own setting (concurrency=, target_qps=) is taken out of it. A group of one cell is a
// sweep of one point (the table shows it; the front and the knee of one point say little). Cells with the same
// load in one group (repeats not combined) keep the first.
std::vector<ServingSweep> serving_sweeps(std::span<const ServingCell> cells);

}  // namespace inferbench::analysis
