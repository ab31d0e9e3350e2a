// The metrics of a serving cell (core/serving.hpp): a server measured from the client's side, computed from the
// requests stored for it (every chunk with its arrival time) and the GPU samples of the same time. Recomputable
// at any time, never stored. Warm-up requests are stored and left out of every figure.
//
// Each metric is defined once, here (per-request figures in core/serving_figures), with the other tools' names
// for the same quantity: vLLM (`vllm bench serve`), SGLang (`bench_serving`), NVIDIA AIPerf, MLPerf LoadGen.
// Their names disagree: AIPerf's "inter_token_latency" is our TPOT; vLLM's and SGLang's "ITL" is our chunk gap.
// docs/serving-metrics.md holds the same table for readers.
//
//   TTFT (time to first token)  the first chunk with output's arrival - the request's scheduled time (open
//                               loop: its arrival, so a wait for a connection counts). Per ok request.
//                               vLLM, SGLang: TTFT; AIPerf: time_to_first_token; LoadGen: TTFT (first token
//                               latency). vLLM and AIPerf start at the send, so their TTFT leaves the wait out.
//   TPOT (time per output token) (e2e - TTFT) / (output tokens - 1), per ok request with 2 or more output tokens.
//                               vLLM, SGLang: TPOT; AIPerf: inter_token_latency; LoadGen: TPOT.
//   chunk gap                   the arrival difference of consecutive chunks with output, pooled over every ok
//                               request. vLLM, SGLang: ITL; AIPerf: inter_chunk_latency; LoadGen: none.
//   per-token latency           a chunk gap divided by the tokens its later chunk carried, once per token
//                               (usage counts per chunk); equals the chunk gap at one token per chunk. vLLM,
//                               SGLang, AIPerf, LoadGen: none (each counts a chunk of several tokens as one gap).
//   end-to-end latency          the last byte's arrival - the scheduled time, per ok request. vLLM, SGLang: E2EL;
//                               AIPerf: request_latency; LoadGen: the query's latency.
//   measured window             from the first send to the last end of the measured (non-warm-up) requests, ok
//                               or not: the time every throughput below divides by. vLLM, SGLang: the
//                               benchmark duration; AIPerf: benchmark_duration.
//   output tokens/s (system)    every ok request's output tokens / the measured window. vLLM, SGLang: output
//                               token throughput; AIPerf: output_token_throughput; LoadGen: tokens per second.
//   output tokens/s per user    per ok request with 2 or more output tokens, 1 / TPOT: how fast a user sees text
//                               once it has begun. AIPerf: output_token_throughput_per_user; vLLM, SGLang: none
//                               (1 / their TPOT).
//   requests/s                  ok requests / the measured window. vLLM, SGLang: request throughput; AIPerf:
//                               request_throughput; LoadGen: completed samples per second.
//   goodput                     requests meeting every SLO that is set (core/serving_figures meets_slos) / the
//                               measured window, and as a fraction of the measured requests sent (failed ones
//                               count against both). vLLM: request goodput; AIPerf: goodput and
//                               good_request_fraction; SGLang, LoadGen: none.
//   MLPerf verdict              p99 TTFT and p99 TPOT within their bounds with early stopping on both (failed
//                               requests over both): core/serving_figures judge_llm_server. LoadGen: the LLM
//                               Server scenario's VALID / INVALID.
//   energy, tokens per joule    the server's GPUs' energy over the measure phase (analysis/telemetry_summary:
//                               energy counters, else power integrated), else for a server on the CPU the
//                               package's RAPL counter (the whole package: every process on it), and every ok
//                               request's output tokens over it (counted for the time the readings span);
//                               "not measured" without either. None of the other tools measures it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analysis/generation_metrics.hpp"
#include "core/samples.hpp"
#include "core/serving.hpp"
#include "core/serving_figures.hpp"
#include "core/statistics/statistics.hpp"

namespace inferbench::analysis {

// The measured requests of a cell by how they ended.
struct ServingCounts {
    std::int64_t sent = 0;  // measured requests (warm-up ones left out), whatever their outcome
    std::int64_t ok = 0;
    std::int64_t warmup = 0;  // warm-up requests stored, in no figure
    // Each outcome other than ok that occurred, with its count, in RequestOutcome's order.
    std::vector<std::pair<RequestOutcome, std::int64_t>> failures;
    // The HTTP statuses of the http_status failures (429, 500, 503, ...), with their counts, ascending.
    std::vector<std::pair<std::int64_t, std::int64_t>> http_statuses;
    std::int64_t failed() const { return sent - ok; }
};

// How the output tokens of the ok requests were counted (core/serving_figures TokenCountSource).
struct TokenCounting {
    std::int64_t from_usage = 0;   // requests whose count is the server's usage
    std::int64_t from_chunks = 0;  // requests counted from their chunks (no usage reported)
    std::int64_t unknown = 0;      // requests whose count is not known: in no token figure
};

// Goodput under the cell's SLOs.
struct Goodput {
    ServingSlos slos;
    std::int64_t good = 0;  // measured requests meeting every SLO that is set
    double per_s = 0;       // good / the measured window
    double fraction = 0;    // good / measured requests sent
};

struct ServingSummary {
    ServingCounts counts;
    TokenCounting token_counting;
    // Distributions over the ok requests (chunk gaps and per-token latencies: every gap of every ok request, in
    // request order); each nothing where no request defines it.
    std::optional<LatencyDistribution> ttft, tpot, chunk_gap, per_token, e2e;
    // The measured window on core/clock; both 0 when empty, and in a row that combines repeats (each had its own).
    std::int64_t window_start_ns = 0, window_end_ns = 0;
    std::int64_t window_ns() const { return window_end_ns - window_start_ns; }
    std::int64_t output_tokens = 0;                             // of the ok requests whose count is known
    std::optional<double> output_tokens_per_s;                  // system; nothing for an empty window
    std::optional<TimingSummary> output_tokens_per_s_per_user;  // per ok request (values in tokens/s, not ns)
    std::optional<double> requests_per_s;                       // ok requests per second of the window
    std::optional<Goodput> goodput;                             // where any SLO is set
    std::optional<ServingVerdict> verdict;                      // MLPerf's, where a TTFT or TPOT bound is set
    std::optional<double> energy_j;                             // nothing: "not measured" (kNotMeasuredText)
    std::string energy_source;  // "GPU energy counter", "GPU integrated power", "CPU package (RAPL)"; empty: none
    std::optional<double> tokens_per_joule, joules_per_token;
    std::vector<std::string> notes;  // what is not defined or not measured, and why; how tokens were counted
};

// The summary of a cell's stored requests (warm-up ones included: they are counted and left out) under its SLOs,
// with the GPU samples that are the server's (every phase; the measure phase's are read), and the CPU samples
// whose RAPL readings give the energy where no GPU sample is given. Throws UserError when no measured request is
// stored.
ServingSummary serving_summary(std::span<const ServedRequest> requests, const ServingSlos& slos,
                               std::span<const GpuSample> gpu = {}, std::span<const CpuSample> cpu = {});

}  // namespace inferbench::analysis
