#include "core/samples.hpp"

#include <array>
#include <utility>

namespace inferbench {
namespace {

constexpr std::array<std::pair<SamplePhase, std::string_view>, 4> kPhases = {{
    {SamplePhase::load, "load"},
    {SamplePhase::warmup, "warmup"},
    {SamplePhase::measure, "measure"},
    {SamplePhase::teardown, "teardown"},
}};

}  // namespace

std::string_view to_string(SamplePhase phase) {
    for (const auto& [value, name] : kPhases)
        if (value == phase) return name;
    return "measure";
}

std::optional<SamplePhase> sample_phase_from_string(std::string_view text) {
    for (const auto& [value, name] : kPhases)
        if (name == text) return value;
    return std::nullopt;
}

namespace clock_event {

const std::vector<Reason>& reasons() {
    static const std::vector<Reason> all = {
        {kGpuIdle, "gpu_idle", "GPU idle", false},
        {kApplicationsClocksSetting, "applications_clocks_setting", "applications clocks setting", false},
        {kSwPowerCap, "sw_power_cap", "SW power cap", true},
        {kHwSlowdown, "hw_slowdown", "HW slowdown", true},
        {kSyncBoost, "sync_boost", "sync boost", true},
        {kSwThermalSlowdown, "sw_thermal_slowdown", "SW thermal slowdown", true},
        {kHwThermalSlowdown, "hw_thermal_slowdown", "HW thermal slowdown", true},
        {kHwPowerBrakeSlowdown, "hw_power_brake_slowdown", "HW power brake slowdown", true},
        {kDisplayClockSetting, "display_clock_setting", "display clock setting", false},
    };
    return all;
}

std::uint64_t throttling_bits() {
    std::uint64_t bits = 0;
    for (const Reason& reason : reasons())
        if (reason.throttles) bits |= reason.bit;
    return bits;
}

std::string describe(std::uint64_t bits) {
    std::string text;
    for (const Reason& reason : reasons()) {
        if ((bits & reason.bit) == 0) continue;
        if (!text.empty()) text += ", ";
        text += reason.label;
    }
    return text.empty() ? "none" : text;
}

}  // namespace clock_event
bool gpu_idle(const GpuSample& sample) {
    return (sample.clock_event_reasons.value_or(0) & clock_event::kGpuIdle) != 0 ||
           (sample.gpu_util_pct && *sample.gpu_util_pct <= kIdleUtilPct);
}

}  // namespace inferbench
