// Names of the figures `inferbench import trtexec` stores from a trtexec log in place of iterations
// (benchmark_metrics rows): the log's totals, and each timed quantity's statistics in ms, named
// "<quantity>_<statistic>_ms" ("gpu_compute_mean_ms"). The summary and the findings read them back by these names.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace inferbench::trtexec_metrics {

inline constexpr std::string_view kThroughputQps = "throughput_qps";                   // queries per second, "qps"
inline constexpr std::string_view kQueries = "queries";                                // measured queries, "count"
inline constexpr std::string_view kTotalHostWalltimeS = "total_host_walltime_s";       // "s"
inline constexpr std::string_view kTotalGpuComputeTimeS = "total_gpu_compute_time_s";  // "s"
inline constexpr std::string_view kGpuComputeCvPct = "gpu_compute_cv_pct";             // "%"
inline constexpr std::string_view kTraceAverageRuns = "trace_average_runs";            // runs per trace line, "count"

// The timed quantities trtexec prints (another printed name becomes its snake_case form).
inline constexpr std::string_view kHostLatency = "host_latency";         // "Latency" or "Host Latency"
inline constexpr std::string_view kE2eHostLatency = "e2e_host_latency";  // "End-to-End Host Latency"
inline constexpr std::string_view kEnqueue = "enqueue";                  // "Enqueue Time"
inline constexpr std::string_view kH2d = "h2d";                          // "H2D Latency"
inline constexpr std::string_view kGpuCompute = "gpu_compute";           // "GPU Compute Time"
inline constexpr std::string_view kD2h = "d2h";                          // "D2H Latency"

// Each quantity's statistics; a percentile's is "p" and the percent ("p99", "p99.9").
inline constexpr std::string_view kMin = "min";
inline constexpr std::string_view kMax = "max";
inline constexpr std::string_view kMean = "mean";
inline constexpr std::string_view kMedian = "median";

// 99.9 -> "p99.9", 90 -> "p90": a percentile's statistic, as trtexec prints the percent.
inline std::string percentile(double percent) { return fmt::format("p{:g}", percent); }

// "gpu_compute", "mean" -> "gpu_compute_mean_ms".
inline std::string statistic_name(std::string_view quantity, std::string_view statistic) {
    return std::string(quantity) + "_" + std::string(statistic) + "_ms";
}

}  // namespace inferbench::trtexec_metrics
