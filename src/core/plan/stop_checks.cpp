#include "core/plan/stop_checks.hpp"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

// The settings each criterion reads besides min_iterations and max_iterations.
std::vector<std::string_view> criterion_keys(StopCriterion criterion) {
    switch (criterion) {
        case StopCriterion::fixed: return {"duration"};
        case StopCriterion::stdrel: return {"max_noise", "min_time", "stop_timeout"};
        case StopCriterion::entropy: return {"max_angle", "min_r2", "stop_timeout"};
    }
    return {};
}

// A worker is killed at the timeout, load included: a warm-up and measured phase (the duration for fixed,
// stop_timeout for the others) that fill it would make every cell time out.
void require_time_after_measuring(const Plan& plan) {
    const LoopSettings& loop = plan.settings.loop;
    const bool fixed = loop.stop == StopCriterion::fixed;
    const std::string_view measure_key = fixed ? "duration" : "stop_timeout";
    if (plan.settings.timeout_ns > loop.warmup_ns + planned_measure_ns(loop)) return;
    throw UserError(fmt::format("{}: timeout {} leaves no time to load the model after the warm-up ({}) and {} ({}): "
                                "the worker would be killed before {}; raise timeout or lower {}",
                                origin_of(plan, {"timeout", measure_key, "warmup"}),
                                format_duration(plan.settings.timeout_ns), format_duration(loop.warmup_ns), measure_key,
                                format_duration(planned_measure_ns(loop)),
                                fixed ? std::string("its measured phase ends") : std::string(to_string(loop.stop)) + " gives up",
                                measure_key));
}

}  // namespace

void check_stop_settings(const Plan& plan) {
    const LoopSettings& loop = plan.settings.loop;
    const auto used = criterion_keys(loop.stop);
    for (const std::string_view key : {"max_noise", "min_time", "max_angle", "min_r2", "stop_timeout"}) {
        if (std::find(used.begin(), used.end(), key) != used.end() || !plan.origins.contains(key)) continue;
        std::vector<std::string> users;
        for (const StopCriterion criterion : kAllStopCriteria) {
            const auto keys = criterion_keys(criterion);
            if (std::find(keys.begin(), keys.end(), key) != keys.end()) users.emplace_back(to_string(criterion));
        }
        throw UserError(fmt::format("{}: {} is a setting of stop: {}, and this plan's stop is {}; set stop: {}, or "
                                    "leave {} out",
                                    origin_of(plan, {key}), key, join(users, " or "), to_string(loop.stop),
                                    users.front(), key));
    }
    require_time_after_measuring(plan);
    if (loop.stop == StopCriterion::stdrel && loop.stop_timeout_ns < loop.min_time_ns)
        throw UserError(fmt::format("{}: stop_timeout {} is below min_time {}: stdrel could never stop before giving "
                                    "up; raise stop_timeout or lower min_time",
                                    origin_of(plan, {"stop_timeout", "min_time"}), format_duration(loop.stop_timeout_ns),
                                    format_duration(loop.min_time_ns)));
}

}  // namespace inferbench
