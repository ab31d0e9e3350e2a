// The tables and columns `inferbench merge` copies (store_merge.hpp): the schema of store/schema.cpp as the merge
// reads and writes it. tests/store/store_merge_test checks this list against the schema a new store gets.
#include "store/store_merge.hpp"

namespace inferbench::store {
namespace {

using enum ColumnType;

// Every column but the table's own id and its parent's, in schema order.
constexpr MergedColumn kRunColumns[] = {
    {"name", text},
    {"started_unix_ms", integer},
    {"ended_unix_ms", integer},
    {"status", text},
    {"plan_json", text},
    {"environment_json", text},
    {"host", text},
    {"git_commit", text},
    {"inferbench_version", text},
    {"orchestrator_pid", integer},
    {"orchestrator_start_ticks", integer},
    {"orchestrator_boot_id", text},
    {"orchestrator_pid_namespace", text},
    {"end_reason", text},
    {"run_uid", text},
    {"shard_index", integer},
    {"shard_count", integer},
};

constexpr MergedColumn kBenchmarkColumns[] = {
    {"ordinal", integer},
    {"model", text},
    {"backend", text},
    {"backend_version", text},
    {"device", text},
    {"precision", text},
    {"batch_size", integer},
    {"variant", text},
    {"status", text},
    {"reason", text},
    {"started_unix_ms", integer},
    {"ended_unix_ms", integer},
    {"load_ns", integer},
    {"model_path", text},
    {"model_size_bytes", integer},
    {"warmup_iterations", integer},
    {"measured_wall_ns", integer},
    {"settings_json", text},
    {"stderr_tail", text},
    {"repeat_index", integer},
    {"convergence", text},
    {"stop_reason", text},
    {"input_tokens", integer},
    {"output_tokens", integer},
    {"cpu_affinity", text},
    {"concurrent_json", text},
};

constexpr MergedColumn kIterationColumns[] = {
    {"iteration", integer}, {"start_ns", integer},   {"e2e_ns", integer}, {"enqueue_ns", integer},
    {"h2d_ns", integer},    {"compute_ns", integer}, {"d2h_ns", integer}, {"queue_ns", integer},
};

constexpr MergedColumn kMetricColumns[] = {{"name", text}, {"value", real}, {"unit", text}};

constexpr MergedColumn kSeriesColumns[] = {{"series", text}, {"seq", integer}, {"value", real}};

constexpr MergedColumn kGpuSampleColumns[] = {
    {"seq", integer},
    {"t_ns", integer},
    {"phase", text},
    {"gpu_index", integer},
    {"power_w", real},
    {"power_avg_w", real},
    {"energy_mj", real},
    {"power_limit_w", real},
    {"temperature_c", real},
    {"memory_temperature_c", real},
    {"sm_clock_mhz", real},
    {"memory_clock_mhz", real},
    {"graphics_clock_mhz", real},
    {"gpu_util_pct", real},
    {"memory_util_pct", real},
    {"fb_used_mib", real},
    {"fb_total_mib", real},
    {"pcie_tx_kib_s", real},
    {"pcie_rx_kib_s", real},
    {"pstate", integer},
    {"clock_event_reasons", integer},
    {"process_fb_mib", real},
};

constexpr MergedColumn kCpuSampleColumns[] = {
    {"seq", integer},
    {"t_ns", integer},
    {"phase", text},
    {"process_cpu_pct", real},
    {"process_cpu_per_core", text},
    {"process_rss_mib", real},
    {"process_peak_rss_mib", real},
    {"host_cpu_pct", real},
    {"host_memory_used_mib", real},
    {"host_memory_total_mib", real},
    {"cpu_package_energy_j", real},
};

constexpr MergedColumn kTelemetrySourceColumns[] = {{"source", text}, {"status", text}, {"detail", text}};

constexpr MergedColumn kProbeColumns[] = {
    {"device_key", text}, {"device_name", text}, {"uuid", text},      {"measured_unix_ms", integer}, {"name", text},
    {"value", real},      {"unit", text},        {"precision", text}, {"details_json", text},
};

constexpr MergedColumn kLayerTimeColumns[] = {
    {"layer", integer}, {"node", text},        {"op_type", text},          {"provider", text},
    {"calls", integer}, {"total_ns", integer}, {"host_dispatch", integer},
};

constexpr MergedColumn kGenerationStepColumns[] = {
    {"generation", integer}, {"step", integer}, {"end_ns", integer}, {"kv_cache_bytes", integer}};

constexpr MergedColumn kGeneratedTokenColumns[] = {{"sequence", integer}, {"position", integer}, {"token", integer}};

constexpr MergedColumn kServingRequestColumns[] = {
    {"seq", integer},          {"request", integer},       {"warmup", integer},
    {"scheduled_ns", integer}, {"sent_ns", integer},       {"end_ns", integer},
    {"outcome", text},         {"http_status", integer},   {"error", text},
    {"input_tokens", integer}, {"output_tokens", integer}, {"cached_tokens", integer},
    {"finish_reason", text},   {"server_prompt_ms", real}, {"server_generation_ms", real},
};

constexpr MergedColumn kServingChunkColumns[] = {
    {"seq", integer}, {"chunk", integer}, {"arrival_ns", integer}, {"tokens", integer}};

constexpr MergedColumn kServingWorkloadColumns[] = {
    {"fingerprint", text},    {"workload_json", text},  {"slo_ttft_ns", integer},
    {"slo_tpot_ns", integer}, {"slo_e2e_ns", integer},  {"endpoint", text},
    {"server_command", text}, {"server_version", text}, {"model_name", text},
};

constexpr MergedColumn kPipelineStageColumns[] = {
    {"iteration", integer}, {"stage", text},  {"place", text},   {"start_ns", integer},
    {"end_ns", integer},    {"cpu_ns", integer}, {"images", integer},
};

constexpr std::string_view kBenchmarkId = "benchmark_id";

constexpr MergedTable kTables[] = {
    {"runs", "run_id", "", kRunColumns, "run_id"},
    {"benchmarks", kBenchmarkId, "run_id", kBenchmarkColumns, "ordinal, repeat_index, benchmark_id"},
    {"iterations", "", kBenchmarkId, kIterationColumns, "iteration"},
    {"benchmark_metrics", "", kBenchmarkId, kMetricColumns, "name"},
    {"benchmark_series", "", kBenchmarkId, kSeriesColumns, "series, seq"},
    {"gpu_samples", "", kBenchmarkId, kGpuSampleColumns, "seq"},
    {"cpu_samples", "", kBenchmarkId, kCpuSampleColumns, "seq"},
    {"telemetry_sources", "", kBenchmarkId, kTelemetrySourceColumns, "source"},
    {"layer_times", "", kBenchmarkId, kLayerTimeColumns, "layer"},
    {"generation_steps", "", kBenchmarkId, kGenerationStepColumns, "generation, step"},
    {"generated_tokens", "", kBenchmarkId, kGeneratedTokenColumns, "sequence, position"},
    {"serving_requests", "", kBenchmarkId, kServingRequestColumns, "seq"},
    {"serving_chunks", "", kBenchmarkId, kServingChunkColumns, "seq, chunk"},
    {"serving_workloads", "", kBenchmarkId, kServingWorkloadColumns, "benchmark_id"},
    {"pipeline_stages", "", kBenchmarkId, kPipelineStageColumns, "iteration, stage"},
    {"device_probes", "probe_id", "", kProbeColumns, "measured_unix_ms, probe_id"},
};

}  // namespace

std::span<const MergedTable> merged_tables() { return kTables; }

}  // namespace inferbench::store
