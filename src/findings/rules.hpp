// The rules: each a pure function over loaded evidence (findings/evidence.hpp) that returns zero or
// more findings, and nothing where its data is missing (or a "not measured" finding where a reader
// expects the answer). The thresholds are named here, each with where it comes from.
#pragma once

#include <span>
#include <vector>

#include "findings/evidence.hpp"
#include "findings/finding.hpp"

namespace inferbench::findings {

namespace limits {
// trtexec: "Throughput may be bound by Enqueue Time" when the enqueue time is >= 80% of GPU compute.
inline constexpr double kEnqueueBoundRatio = 0.8;
// GPU compute that follows the host's enqueue time iteration by iteration: a Pearson r of 0.9 (81% of compute's
// variance moving with the host's) and a median compute 5% higher in the quarter of iterations with the longest
// enqueue than in the quarter with the shortest (the same 5% as the drift rule) before it is worth a finding.
inline constexpr double kHostCouplingR = 0.9;
inline constexpr double kHostCouplingChange = 0.05;
// trtexec: "may be bound by H2D/D2H transfers" when a copy takes at least as long as the compute.
inline constexpr double kTransferBoundRatio = 1.0;
// End-to-end at least twice the GPU's own time: half of every inference is spent on the host
// (launches, synchronisation, the harness), more than any kernel tuning can win back.
inline constexpr double kHostBoundRatio = 2.0;
// Below this mean GPU utilisation the GPU waits for the host more than it works (nvidia-smi's
// utilisation is the share of time a kernel ran).
inline constexpr double kLowGpuUtilPct = 50.0;
// The share of the measured time a throttle reason must hold, and the SM clock drop below the
// benchmark's highest, before throttling is reported: the same 10% as the summary's warnings.
inline constexpr double kThrottleShare = 0.10;
inline constexpr double kClockDropFraction = 0.10;
// Latency inside vs outside throttled windows: a change under 2% is within what run-to-run noise gives.
inline constexpr double kLatencyChangeFraction = 0.02;
// The (and MLPerf's batching practice's) plateau: the next batch size gains under 5% throughput.
inline constexpr double kBatchGainFraction = 0.05;
// Latency grows linearly with the batch once doubling the batch costs >= 90% more latency.
inline constexpr double kLinearLatencyFraction = 0.9;
// Two latency levels: Ashman's D > 2 separates a two-component mixture cleanly (Ashman et al. 1994);
// each level holds at least 10% of the iterations, so a few slow ones are outliers instead; the gap
// between the levels is wider than each level's own spread.
inline constexpr double kBimodalSeparation = 2.0;
inline constexpr double kBimodalMinShare = 0.10;
// Drift: the medians of the first and last tenth of the iterations differ by more than 5%.
inline constexpr double kDriftFraction = 0.05;
inline constexpr std::size_t kMinIterationsForShape = 50;  // fewer gives no shape to read
// An outlier takes at least twice the median iteration (LoadGen and trtexec report p99 and max;
// twice the median is past any of their tails in a stable run).
inline constexpr double kOutlierFactor = 2.0;
// A core counts as full at 95% busy (sampling a fully busy core reads 95-100%).
inline constexpr double kFullCorePct = 95.0;
// A full core beside a GPU that copies and computes for at least 80% of each iteration (trtexec's enqueue rule
// turned around) is the synchronisation spinning while it waits, not a thread at its limit.
inline constexpr double kGpuBusyShare = 0.8;
// A busy host: other processes kept at least a quarter of the host's CPUs busy through the measured
// phase, on average. From there they take whole cores from a multi-threaded run (on the 2-core CI hosts,
// half of one), and their threads preempt the worker's: latency and its spread, a thread rule's
// "one core busy" and a drift are then the host's doing as much as the benchmark's.
inline constexpr double kHostBusyOthersPct = 25.0;
// RSS growth over the measured phase that points to a leak: more than 10% and more than 16 MiB
// (allocator pools settle well within that).
inline constexpr double kRssGrowthFraction = 0.10;
inline constexpr double kRssGrowthMib = 16.0;
// Per-layer shares worth a finding: memory-bound layers holding half of the time; depthwise, 1x1 or
// unaligned layers a tenth of it; data-movement ops (copies, reformats, transposes) a fifth.
inline constexpr double kMemoryBoundSharePct = 50.0;
inline constexpr double kPitfallSharePct = 10.0;
inline constexpr double kDataMovementSharePct = 20.0;
// A non-GPU node in a GPU benchmark's profile is a fallback worth naming from this share on.
inline constexpr double kFallbackSharePct = 1.0;
// Pre- and post-processing worth a finding: a fifth of the end-to-end time, where a model infinitely faster
// would gain at most 1.25x end to end (Amdahl), so the stages outside it bound what tuning the model buys.
inline constexpr double kPrePostSharePct = 20.0;
// Decode against its bandwidth bound (analysis/generation_bounds). At half the bound or more, memory is what
// limits it (the rest is attention's arithmetic, sampling and the engine's per-step work): memory-bound, as
// expected. Where the KV cache is under half the bytes a step reads, the weights dominate and a batch 4x larger
// reads them once for 4x the tokens (the suggestion quotes that batch's ceiling).
inline constexpr double kDecodeMemoryBoundFraction = 0.5;
inline constexpr double kDecodeKvShareForBatching = 0.5;
inline constexpr std::int64_t kDecodeBatchFactor = 4;
// Launch-bound decode, on a GPU: under a fifth of the bandwidth bound at batch 4 or less with under 64 MiB read per
// step (the order of a data-centre GPU's L2, 50 MB on an H100): the bytes would stream in a small part of the
// step, so fixed per-step costs (launches, synchronisation, host work) make the time. A CPU engine launches no
// kernels: there decode below its bound is decode_below_bound's.
inline constexpr double kLaunchBoundFraction = 0.2;
inline constexpr std::int64_t kLaunchBoundMaxBatch = 4;
inline constexpr double kLaunchBoundMaxBytes = 64.0 * 1024 * 1024;
// KV-cache growth: the fitted decode step time rises by 10% or more from the first decode step to the last (the
// drift rule's 5% doubled, as each step's median over the generations still carries a busy host's noise), over
// at least 8 decode steps.
inline constexpr double kKvGrowthFraction = 0.10;
inline constexpr std::size_t kKvGrowthMinSteps = 8;
// Serving cells (rules_serving). A rule on requests reads at least 20 measured ok requests (a median of fewer moves
// with one slow request). TTFT dominated by queueing: its median at least twice the server's own median prompt time
// (more than half of the wait for the first token spent outside prefill) and at least 5 ms above it (a request's
// HTTP round trip and first sampled token on the same host take about 1 ms).
inline constexpr std::size_t kServingMinRequests = 20;
inline constexpr double kQueueingTtftFactor = 2.0;
inline constexpr double kQueueingMinExcessMs = 5.0;
// Across a sweep: median TTFT at the highest load at least twice the lowest load's while the server's median prompt
// time grows by under a quarter (prefill got no slower; the wait did).
inline constexpr double kQueueingSweepTtftGrowth = 2.0;
inline constexpr double kQueueingSweepPromptGrowth = 1.25;
// Prefill interference: a chunk gap of 3x the median gap or more is a spike (a decode step of a steady batch costs
// about the same each time; 3x is two more steps' worth of work, a prompt's prefill got in); it coincides with a
// prefill when another request's first token arrives inside the gap or within one median gap after it. The
// finding needs 3 such spikes and at least half of all spikes coinciding (the rest: the host, the network). At most
// 5 of them are listed as its evidence.
inline constexpr double kGapSpikeFactor = 3.0;
inline constexpr std::size_t kMinInterferenceSpikes = 3;
inline constexpr double kInterferenceShare = 0.5;
// ... and at least twice the share of the other gaps that do (under heavy traffic first tokens arrive all the time;
// a share no higher than ordinary gaps' is chance, not interference).
inline constexpr double kInterferenceOverOthers = 2.0;
inline constexpr std::size_t kListedEvents = 5;
// Failed requests: any is a warning (a request the user got no answer to); a problem from the share at which the
// failures alone keep goodput under the knee's target (analysis' limits::kGoodputTarget, 99%: 1% failed).
inline constexpr double kServingErrorProblemShare = 0.01;
// Pipeline cells (rules_pipeline). The network under half of a batch's end-to-end time: a network infinitely faster
// would gain at most 2x end to end (Amdahl), so the stages around it, not the model, decide the throughput.
inline constexpr double kPipelineNetworkSharePct = 50.0;
// Post-processing on the CPU (box decoding, NMS) that takes at least as long per batch as the network's inference.
inline constexpr double kPostOverInferRatio = 1.0;
}  // namespace limits

// Per benchmark.
std::vector<Finding> throttling(const BenchmarkEvidence& e);
std::vector<Finding> launch_bound(const BenchmarkEvidence& e);
std::vector<Finding> transfer_bound(const BenchmarkEvidence& e);
std::vector<Finding> instability(const BenchmarkEvidence& e);
std::vector<Finding> not_converged(const BenchmarkEvidence& e);
std::vector<Finding> cpu_limits(const BenchmarkEvidence& e);
// Other processes' share of the host's CPUs during the measured phase (BenchmarkEvidence::host).
std::vector<Finding> host_busy(const BenchmarkEvidence& e);
bool host_was_busy(const BenchmarkEvidence& e);
std::vector<Finding> pre_post_processing(const BenchmarkEvidence& e);
std::vector<Finding> layer_pitfalls(const BenchmarkEvidence& e);
std::vector<Finding> compile_fallbacks(const BenchmarkEvidence& e);
// Generative benchmarks (rules_generation): decode against its bandwidth bound, launch-bound decode, decode steps
// that slow as the KV cache grows.
std::vector<Finding> decode_bound(const BenchmarkEvidence& e);
std::vector<Finding> launch_bound_generation(const BenchmarkEvidence& e);
std::vector<Finding> kv_cache_growth(const BenchmarkEvidence& e);
// Serving cells (rules_serving): TTFT far above the server's own prompt time, decode gaps that coincide with other
// requests' first tokens, failed requests by kind against goodput (serving.errors; a serving cell without a
// measured request: serving.not_measured).
std::vector<Finding> ttft_queueing(const BenchmarkEvidence& e);
std::vector<Finding> prefill_interference(const BenchmarkEvidence& e);
std::vector<Finding> serving_errors(const BenchmarkEvidence& e);
// Pipeline cells (rules_pipeline): the network under kPipelineNetworkSharePct of end-to-end time, with the CPU
// stage that bounds throughput (or why that is unknown) and the GPU's idle time (pipeline.network_share); a CPU
// post-processing stage costing more than inference (pipeline.postprocess_over_inference, pipeline.nms_over_inference).
std::vector<Finding> pipeline_network_share(const BenchmarkEvidence& e);
std::vector<Finding> pipeline_postprocess_cost(const BenchmarkEvidence& e);

// Across the benchmarks of a selection.
// Batch sizes of a generative cell that ran out of memory, beside the largest that ran.
std::vector<Finding> generation_out_of_memory(std::span<const BenchmarkEvidence> all);
// Serving sweeps (analysis/serving_sweep): the load where throughput stops growing while TTFT grows
// (serving.saturation), and TTFT that grows with the load while the server's prompt time does not
// (serving.ttft_queueing).
std::vector<Finding> serving_saturation(std::span<const BenchmarkEvidence> all);
std::vector<Finding> sweep_ttft_queueing(std::span<const BenchmarkEvidence> all);
// A pipeline cell bound by a CPU pre-processing stage beside the same setup's cell with pre-processing on the GPU
// that ran faster than that bound (pipeline.gpu_preprocess); silent where no GPU pre-processing cell was measured.
std::vector<Finding> pipeline_gpu_preprocess(std::span<const BenchmarkEvidence> all);
std::vector<Finding> precision_anomalies(std::span<const BenchmarkEvidence> all);
std::vector<Finding> batch_scaling(std::span<const BenchmarkEvidence> all);
std::vector<Finding> comparisons(std::span<const BenchmarkEvidence> all);
// A cell's repeats whose means differ beyond their own intervals (the same test as comparisons' noise).
std::vector<Finding> repeat_spread(std::span<const BenchmarkEvidence> all);
// One finding naming every benchmark whose GPU layers were timed as the host's dispatch (LayerTime::host_dispatch).
std::vector<Finding> unmeasured_layer_times(std::span<const BenchmarkEvidence> all);

}  // namespace inferbench::findings
