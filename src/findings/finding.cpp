#include "findings/finding.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
                                    static_cast<double>(evidence.window->start_ns) / 1e9,
                                    static_cast<double>(evidence.window->end_ns) / 1e9));
    if (!evidence.layers.empty()) parts.push_back(fmt::format("layers: {}", fmt::join(evidence.layers, ", ")));
    return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace inferbench::findings
