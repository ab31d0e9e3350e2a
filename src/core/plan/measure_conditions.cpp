#include "core/plan/measure_conditions.hpp"

#include <array>
#include <utility>

#include <fmt/format.h>

namespace inferbench {
namespace {

constexpr std::array<std::pair<ThrottlePolicy, std::string_view>, 3> kPolicies = {{
    {ThrottlePolicy::keep, "keep"},
    {ThrottlePolicy::flag, "flag"},
    {ThrottlePolicy::discard, "discard"},
}};

constexpr std::array<std::pair<SyncMode, std::string_view>, 4> kSyncModes = {{
    {SyncMode::automatic, "auto"},
    {SyncMode::spin, "spin"},
    {SyncMode::yield, "yield"},
    {SyncMode::blocking, "blocking"},
}};

template <typename Enum, std::size_t N>
std::string_view name_of(const std::array<std::pair<Enum, std::string_view>, N>& names, Enum value) {
    for (const auto& [e, name] : names)
        if (e == value) return name;
    return names.front().second;
}

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::array<std::pair<Enum, std::string_view>, N>& names, std::string_view text) {
    for (const auto& [e, name] : names)
        if (name == text) return e;
    return std::nullopt;
}

}  // namespace

std::string_view to_string(ThrottlePolicy policy) { return name_of(kPolicies, policy); }
std::optional<ThrottlePolicy> parse_throttle_policy(std::string_view text) { return value_of(kPolicies, text); }
std::string_view to_string(SyncMode mode) { return name_of(kSyncModes, mode); }
std::optional<SyncMode> parse_sync_mode(std::string_view text) { return value_of(kSyncModes, text); }

std::string describe(const MeasureConditions& c) {
    return fmt::format("throttle_policy={} throttle_threshold={:g} l2_flush={} sync={}", to_string(c.throttle_policy),
                       c.throttle_threshold, c.l2_flush ? "true" : "false", to_string(c.sync));
}

}  // namespace inferbench
