#include "findings/finding.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/time_units.hpp"

namespace inferbench::findings {

std::string_view to_string(Severity severity) {
    switch (severity) {
        case Severity::info: return "info";
        case Severity::warning: return "warning";
        case Severity::problem: return "problem";
    }
    return "info";
}

std::string describe(const Evidence& evidence) {
    std::vector<std::string> parts;
    if (!evidence.series.empty()) parts.push_back(fmt::format("series: {}", fmt::join(evidence.series, ", ")));
    if (evidence.window)
        parts.push_back(fmt::format("window: {:.2f} s to {:.2f} s of the measured phase",
                                    ns_to_s(evidence.window->start_ns), ns_to_s(evidence.window->end_ns)));
    if (!evidence.layers.empty()) parts.push_back(fmt::format("layers: {}", fmt::join(evidence.layers, ", ")));
    if (!evidence.events.empty()) parts.push_back(fmt::format("events: {}", fmt::join(evidence.events, "; ")));
    return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace inferbench::findings
