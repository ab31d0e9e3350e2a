// The conditions a cell is measured under besides its loop: how throttled iterations are treated
// (throttle_threshold, throttle_policy), whether the GPU's L2 is flushed between iterations (cold runs)
// and how the CPU waits for the GPU (the CUDA primary context's scheduling flags). One struct per cell
// (BenchmarkSpec::conditions), read from the plan's settings by the matrix and stored with the cell.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferbench {

// What the statistics do with iterations flagged as throttled (analysis/throttle_flags):
// keep: flags are not computed (statistics over every iteration, as without flags);
// flag: statistics over every iteration, the share flagged shown beside them;
// discard: statistics over the unflagged iterations, the number discarded shown.
enum class ThrottlePolicy { keep, flag, discard };

// How the CPU thread waits for the GPU: the CUDA primary context's scheduling flags
// (CU_CTX_SCHED_AUTO / SPIN / YIELD / BLOCKING_SYNC). automatic leaves the driver's choice untouched.
enum class SyncMode { automatic, spin, yield, blocking };

std::string_view to_string(ThrottlePolicy policy);
std::optional<ThrottlePolicy> parse_throttle_policy(std::string_view text);
std::string_view to_string(SyncMode mode);  // "auto", "spin", "yield", "blocking"
std::optional<SyncMode> parse_sync_mode(std::string_view text);

// Member initialisers are the plan's defaults. A CPU cell carries l2_flush false and sync automatic
// whatever the plan says (they concern CUDA devices only; core/plan/matrix).
struct MeasureConditions {
    double throttle_threshold = 0.75;  // flagged below this x the GPU's default applications clock
    ThrottlePolicy throttle_policy = ThrottlePolicy::flag;
    bool l2_flush = false;
    SyncMode sync = SyncMode::automatic;

    friend bool operator==(const MeasureConditions&, const MeasureConditions&) = default;
};

// "throttle_policy=flag throttle_threshold=0.75 l2_flush=false sync=auto": for notes and comparisons.
std::string describe(const MeasureConditions& conditions);

}  // namespace inferbench
