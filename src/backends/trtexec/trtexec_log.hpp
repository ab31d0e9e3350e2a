// Reads what trtexec (TensorRT's benchmarking tool) prints: the version, the command line, the
// performance summary, its warnings and the "Average on N runs" trace lines. A pure function of the
// log's text, so tests feed it real logs (TensorRT 7.2 to 10) and TensorRT 11's (its strongly typed build, the
// settings that changed defaults, the --tuneBuildRoutes loop's lines). Lines it does not know are ignored,
// lines with figures no measurement can have are named in rejected_lines;
// CRLF line ends and the "[MM/DD/YYYY-HH:MM:SS] [I] " prefixes are accepted.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace inferbench::trtexec {

// One "Name: min = .. ms, max = .., mean = .., median = .., percentile(99%) = .." line, in ms.
struct LogStatistic {
    double min_ms = 0, max_ms = 0, mean_ms = 0, median_ms = 0;
    std::vector<std::pair<double, double>> percentiles_ms;  // (percent, value) in the printed order

    std::optional<double> percentile(double percent) const;
};

// What the trtexec command line asked for (the text after "# " on the "&&&&" lines).
struct LogCommand {
    std::string text;
    std::string onnx, load_engine, save_engine;
    bool fp16 = false, bf16 = false, int8 = false, fp8 = false, int4 = false, best = false, no_tf32 = false;
    bool strongly_typed = false;             // --stronglyTyped (TensorRT 10; always on, a no-op, in 11)
    std::vector<std::string> removed_flags;  // flags TensorRT 11 removed (backends/trtexec/trtexec_version)
    std::optional<std::int64_t> batch;  // --batch=N, else the first dimension of --shapes / --optShapes
    std::optional<int> device;          // --device=N
};

// The --tuneBuildRoutes loop of TensorRT 11: one child trtexec per build route, each printing its own log
// (and performance summary) inside the parent's, between "&&&& TASK_BEGIN [iter=N]" and TASK_END or TASK_ABORT.
struct LogTuning {
    std::int64_t iterations_begun = 0, iterations_ended = 0, iterations_aborted = 0;
    std::string best_route;                  // "Best iteration: <route> (gpu_time_ms=..)"
    std::optional<double> best_gpu_time_ms;
};

struct TrtexecLog {
    std::string tensorrt_version;  // "10.9.0"; empty when the log does not say
    std::optional<LogCommand> command;
    std::string gpu_name;  // "Selected Device: ..."

    // The settings trtexec printed ("=== Build Options ===", "=== Inference Options ==="), where it did:
    std::string build_precision;          // "Precision: FP32+FP16", "Strongly Typed" (always, in TensorRT 11)
    std::optional<bool> data_transfers;   // "Data transfers: Enabled|Disabled" (off by default in 11)
    std::optional<bool> cuda_graph;       // "CUDA Graph: ..." (on by default in 11)
    std::optional<bool> spin_wait;        // "Spin-wait: ..." (on by default in 11)
    std::vector<std::string> unknown_options;  // "[E] Unknown option: --fp16": the option as trtexec refused it
    int performance_summaries = 0;              // "=== Performance summary ===" headers
    std::optional<LogTuning> tuning;

    std::optional<double> throughput_qps;
    // By quantity: host_latency ("Latency"), e2e_host_latency, enqueue, h2d, gpu_compute, d2h, and
    // a snake_case name for any other statistic line.
    std::map<std::string, LogStatistic, std::less<>> statistics;
    std::optional<double> total_host_walltime_s, total_gpu_compute_time_s;
    std::optional<std::int64_t> queries;  // "Timing trace has N queries over S s" (verbose logs)

    // The "[W] * ..." lines, each with its indented continuation lines joined, without the "* ".
    std::vector<std::string> warnings;
    std::optional<double> gpu_compute_cv_pct;  // from the "unstable" warning
    bool enqueue_bound = false;
    std::optional<bool> passed;  // "&&&& PASSED" / "&&&& FAILED"

    // "Average on N runs - GPU latency: .. ms - Host latency: .. ms (end to end .. ms, enqueue .. ms)":
    // one value per line for each label, in ms, under names like "gpu_latency_ms".
    std::int64_t runs_per_average = 0;
    std::map<std::string, std::vector<double>, std::less<>> trace_averages_ms;

    // Lines whose figures cannot be measurements (a negative, infinite or day-long time, min above
    // max, a trace line's impossible run count) or that are cut short (a trace line also when its times
    // are not the first trace line's), as "line N: why: the line"; their figures are left out.
    std::vector<std::string> rejected_lines;

    bool has_performance_summary() const { return throughput_qps.has_value() || !statistics.empty(); }
    // Built strongly typed: the precision is the ONNX file's, not a flag's.
    bool strongly_typed() const;
    // What every trtexec from 7.1 to 10 prints in its summary and this log lacks ("no 'GPU Compute
    // Time: min = ...' line"); empty when the summary is whole. A log cut inside it lacks its end.
    std::vector<std::string> missing_from_summary() const;
    // Queries measured: the verbose count, else throughput x walltime (trtexec divides one by the other).
    std::optional<std::int64_t> measured_queries() const;
};

TrtexecLog parse_trtexec_log(std::string_view text);

// The version from "[TensorRT vNNNN]" (decoded as getInferLibVersion(), backends/tensorrt/tensorrt_platform) or
// "TensorRT version: X.Y.Z" in the first matching line; empty if none.
std::string find_tensorrt_version(std::string_view text);

// The flags of one command line. `text` is trtexec's argv joined by spaces, as it prints it.
LogCommand parse_trtexec_command(std::string_view text);

// The narrowest type the flags enable (int4, fp8, int8, fp16, bf16, else fp32); "best" for --best, where
// TensorRT picks per layer. fp32 without --noTF32 lets TensorRT use TF32 on Ampere and newer.
std::string precision_label(const LogCommand& command);
// The log's precision: kStronglyTypedLabel for a strongly typed build (the ONNX file's types, which the log
// does not state), else precision_label of its command; fp32 (TensorRT's default) without a command line.
inline constexpr std::string_view kStronglyTypedLabel = "typed";
std::string precision_label(const TrtexecLog& log);

// Every figure of the log as a named number, the unit both in the name and beside it:
// "<quantity>_<min|max|mean|median|pNN>_ms" (e.g. gpu_compute_p99_ms), throughput_qps,
// total_host_walltime_s, total_gpu_compute_time_s, queries, gpu_compute_cv_pct. Where data transfers were
// off ("Data transfers: Disabled"), the H2D and D2H lines print zeros that nothing measured: left out.
struct LogMetric {
    std::string name;
    double value = 0;
    std::string unit;
};
std::vector<LogMetric> log_metrics(const TrtexecLog& log);

}  // namespace inferbench::trtexec
