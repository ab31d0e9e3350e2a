// Names of what the harness itself did around a benchmark, stored with it as benchmark_metrics rows:
// the cooldown before it (runner/orchestrator/cooldown) and what the worker set up for its measure conditions
// (runner/worker/cuda_conditions). None of them is a measured result of the model.
#pragma once

#include <string_view>

namespace inferbench::harness_metrics {

// The wait before the cell (unit "s"), and for `cooldown: idle` whether the GPU got back near its idle
// baseline within cooldown_max (unit "flag": 1 or 0) with its last reading (units "W", "C").
inline constexpr std::string_view kCooldownS = "harness_cooldown_s";
inline constexpr std::string_view kCooldownReachedIdle = "harness_cooldown_reached_idle";
inline constexpr std::string_view kCooldownEndPowerW = "harness_cooldown_end_power_w";
inline constexpr std::string_view kCooldownEndTemperatureC = "harness_cooldown_end_temperature_c";
// l2_flush: the bytes written between iterations (unit "B": twice the GPU's L2 cache).
inline constexpr std::string_view kL2FlushBytes = "harness_l2_flush_bytes";
// sync: the primary context's scheduling flags read back after the backend loaded (unit "flags",
// CU_CTX_SCHED_*), and whether the context was already active when they were set (unit "flag").
inline constexpr std::string_view kCudaSchedFlags = "harness_cuda_sched_flags";
inline constexpr std::string_view kCudaContextWasActive = "harness_cuda_context_was_active";
// inputs from files (the plan's `inputs`): the samples read (unit "count") and whether the measured loop cycled
// them, one per iteration (unit "flag"; 0: the first alone fed every iteration, as a load scenario's instances do).
inline constexpr std::string_view kInputSamples = "harness_input_samples";
inline constexpr std::string_view kInputsCycled = "harness_inputs_cycled";
// parallel: per_device: the memory node the worker's pages were asked to prefer (unit "node"; the GPU's, from
// sysfs), where one was; the CPUs it was pinned to are the benchmark's cpu_affinity.
inline constexpr std::string_view kMemoryNode = "harness_memory_node";
inline constexpr std::string_view kPrefix = "harness_";

}  // namespace inferbench::harness_metrics
