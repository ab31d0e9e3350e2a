// The metrics of a generative benchmark (core/generation.hpp), computed from what was stored for it: its
// iterations (one per generation: start_ns when generate() was called, e2e_ns to the last step's end), its
// generations' steps (step 0 the prefill, ending when every sequence's first token is in host memory; then one
// decode step each) and its telemetry on the same clock. Recomputable at any time, never stored.
//
// Each metric is defined once, here, with the other tools' word for it (their names disagree):
//   TTFT (time to first token)  step 0's end - the generation's start, one value per generation.
//                               vLLM, AIPerf, MLPerf LoadGen: TTFT, the same quantity.
//   TPOT (time per output token) (e2e - TTFT) / (output_tokens - 1), one value per generation: the first token
//                               excluded. Not defined for output_tokens == 1. vLLM: TPOT; MLPerf LoadGen: TPOT;
//                               AIPerf calls this per-request average "inter_token_latency" (ITL).
//   per-token latency            each decode step's duration (its end - the previous step's end), every step of
//                               every generation pooled in one distribution. vLLM: ITL (inter-token latency, each
//                               gap pooled over requests); AIPerf: the gaps behind "inter_chunk_latency" (one token
//                               per chunk here), NOT AIPerf's ITL, which is our TPOT.
//   end-to-end latency           the generation's e2e_ns: from generate() to the last step's end (vLLM: E2EL;
//                               AIPerf: request_latency).
//   prefill tokens/s             batch x input_tokens / mean TTFT (the prompts' tokens over the time to the first
//                               token, summed over generations). llama-bench: pp<input_tokens> t/s.
//   decode tokens/s              batch x (output_tokens - 1) / mean (e2e - TTFT): the tokens of the decode steps
//                               over their time. llama-bench: tg<output_tokens> t/s (which times every generated
//                               token). Not defined for output_tokens == 1.
//   output tokens/s              batch x output_tokens / mean e2e: every generated token, the first included,
//                               over the generations' whole time (vLLM's and AIPerf's output token throughput
//                               count the time between requests too; a generation here is measured alone).
//   peak memory                  the largest GPU memory used (NVML) and process resident set (procfs) sampled in
//                               the measure phase; "not measured" where no sample has it.
//   tokens per joule, joules per token: generated tokens (batch x output_tokens per generation) over the energy
//                               of the measure phase (analysis/telemetry_summary: the GPUs' energy counters,
//                               else their power integrated; tokens counted for the time the readings span).
//                               On a CPU the package's RAPL counter where sampled (the whole package: every
//                               process on it); else "not measured".
// Generations stopped before output_tokens steps are counted and left out of every figure.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/generation.hpp"
#include "core/samples.hpp"
#include "core/spec.hpp"
#include "core/statistics/confidence.hpp"
#include "core/statistics/statistics.hpp"
#include "store/results_store.hpp"

namespace inferbench::analysis {

// What a report prints where a figure has no value, and why (never a 0 in its place).
inline constexpr std::string_view kNotDefinedText = "not defined";    // TPOT and decode rates with 1 output token
inline constexpr std::string_view kNotMeasuredText = "not measured";  // no telemetry for it

// A generative benchmark: one whose cells had input and output tokens (BenchmarkRecord's lengths).
bool is_generative(const store::BenchmarkRecord& benchmark);

// A distribution of durations in ns, with the 95% intervals compare and the findings read (core/statistics:
// batch means of the values in measured order for the mean, order statistics for the percentiles).
struct LatencyDistribution {
    TimingSummary ns;  // count, min, max, mean, p50, p90, p99, ...
    std::optional<Interval> mean_ci, p50_ci, p99_ci;
};

// The CPU package's energy over the measure phase from its RAPL counter (read as joules, wraps undone by the
// sampler), and the span of the two readings; nothing without two rising readings.
struct PackageEnergy {
    double joules = 0;
    std::int64_t span_ns = 0;
};
std::optional<PackageEnergy> package_energy(std::span<const CpuSample> cpu);

// The distribution of durations given in measured order (the order the mean's batch-means interval reads).
LatencyDistribution latency_distribution(std::span<const std::int64_t> in_order);

// One step of one generation, its duration from the step before it (step 0: from the generation's start).
struct StepTime {
    std::int64_t iteration = 0;  // the generation's
    std::int64_t step = 0;       // 0: prefill
    std::int64_t end_ns = 0;     // on the run's clock (core/clock)
    std::int64_t duration_ns = 0;
    std::int64_t kv_cache_bytes = 0;  // the KV cache the step read and wrote
};

// What the worker stored about the decoder it ran (core/metrics/decoder_metrics.hpp): what the bounds
// (analysis/generation_bounds) are computed from.
struct DecoderFacts {
    double parameters = 0;
    double weight_bytes = 0;  // as the engine holds them (quantized weights at their size)
    double parameters_read_per_step = 0;
    double kv_bytes_per_token = 0;  // keys and values of one token over all layers
    std::optional<DecoderShape> shape;  // where every dimension was stored (forward_flops needs it)

    // The weight bytes one decode step reads: weight_bytes x parameters_read_per_step / parameters.
    double weight_bytes_per_step() const;
};

// Nothing where any of the four figures is missing or not above 0.
std::optional<DecoderFacts> decoder_facts(std::span<const store::Metric> metrics);

struct GenerationMetrics {
    std::int64_t batch_size = 1;
    std::int64_t input_tokens = 0;
    std::int64_t output_tokens = 0;
    std::int64_t generations = 0;  // whole generations (output_tokens steps), the figures' basis
    std::int64_t incomplete = 0;   // generations stopped before output_tokens steps: left out
    LatencyDistribution ttft;      // per generation
    std::optional<LatencyDistribution> tpot;       // per generation; nothing for output_tokens == 1 (kNotDefinedText)
    std::optional<LatencyDistribution> per_token;  // every decode step; nothing for output_tokens == 1
    LatencyDistribution e2e;                       // per generation
    double prefill_tokens_per_s = 0;
    std::optional<double> decode_tokens_per_s;  // nothing for output_tokens == 1 (kNotDefinedText)
    std::optional<double> decode_steps_per_s;   // decode_tokens_per_s / batch: what the bandwidth bound caps
    double output_tokens_per_s = 0;
    std::optional<double> peak_gpu_memory_mib;          // the GPU's memory used (every process's)
    std::optional<double> peak_process_gpu_memory_mib;  // the benchmark process's own, where the driver says
    std::optional<double> peak_rss_mib;
    std::optional<double> energy_j;
    std::string energy_source;  // "GPU energy counter", "GPU integrated power", "CPU package (RAPL)"; empty: none
    std::optional<double> tokens_per_joule;
    std::optional<double> joules_per_token;
    std::optional<DecoderFacts> decoder;  // where the worker stored it
    std::vector<std::int64_t> kv_cache_bytes;  // per step of the first whole generation (step 0: prefill)
    std::vector<std::string> notes;  // what is not defined or not measured, and why; incomplete generations
};

// The metrics of one generative benchmark from its iterations and generations (matched by iteration number)
// and its samples (its own GPU's, analysis/telemetry_summary's benchmark_gpu_samples, and the CPU's). Throws
// UserError when the benchmark is not generative or nothing it stored is a whole generation.
GenerationMetrics generation_metrics(const store::BenchmarkRecord& benchmark, std::span<const IterationRecord> iterations,
                                     std::span<const GenerationRecord> generations, std::span<const GpuSample> gpu,
                                     std::span<const CpuSample> cpu);
// The same of a benchmark read back (analysis/summary's read_measured, its generations included), with the decoder
// facts of its metrics; `iterations`, where given, in place of measured.iterations (rows walked from the store).
GenerationMetrics generation_metrics(const store::MeasuredBenchmark& measured,
                                     std::span<const IterationRecord> iterations = {});

// Every step of the whole generations, in measured order (generation, then step): what the per-token latency,
// the KV-cache growth finding and the per-token plots read.
std::vector<StepTime> step_times(std::span<const IterationRecord> iterations,
                                 std::span<const GenerationRecord> generations, std::int64_t output_tokens);

}  // namespace inferbench::analysis
