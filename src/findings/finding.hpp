// A finding: one conclusion drawn from stored results, with the numbers behind it, where in the data
// they are, and what to try. Every rule (findings/rules.hpp) returns these; every printer (explain, the
// HTML report, the workbook) renders them without knowing the rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench::findings {

enum class Severity { info, warning, problem };
std::string_view to_string(Severity severity);  // "info", "warning", "problem"

// A span of a benchmark's measure phase, in ns from its first measured sample or iteration.
struct TimeWindow {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

// Where the finding's numbers come from.
struct Evidence {
    std::vector<std::string> series;  // stored quantities: "iterations.e2e", "gpu_samples.clock_event_reasons"
    std::optional<TimeWindow> window;
    std::vector<std::string> layers;  // per-layer profile entries, "name (op, 12.3%)"
    std::vector<std::string> events = {};  // moments of the run the finding rests on: "request 3 gap 41.0 ms at 1.204 s ..."
};

struct Finding {
    std::string id;  // stable: "throttling.power_cap"
    Severity severity = Severity::info;
    std::vector<std::int64_t> benchmarks;  // ids
    std::string statement;  // one sentence, with numbers
    Evidence evidence;
    std::string try_next;  // what to try
};

// "series: a, b; window: 1.2 s to 3.4 s; layers: x, y; events: e, f" (empty parts left out).
std::string describe(const Evidence& evidence);

}  // namespace inferbench::findings
