// Parsing and printing of the units users type: durations ("5s", "500ms") and integer lists ("1,8,32").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <span>
#include <vector>

namespace inferbench {

// "250ms", "5s", "1.5s", "2m", "1h", "100us", "10ns". A unit is required: a bare number is ambiguous.
// Returns nullopt and sets *why on failure.
std::optional<std::int64_t> parse_duration_ns(std::string_view text, std::string* why = nullptr);
// Shortest exact rendering: 5000000000 -> "5s", 1500000000 -> "1500ms".
std::string format_duration(std::int64_t ns);
// Human rendering of a latency for tables: "812.4 us", "23.41 ms".
std::string format_latency(double ns);

// A number and one of `units` ("1.5KiB", "250 ms"): the number times the unit's scale, rounded, from
// `min` up to 2^62. Nothing, with *why set, otherwise; `kind` and `examples` word the messages:
// "'5' has no unit; write e.g. 10s, 500ms or 2m". parse_duration_ns and the byte sizes use it.
struct UnitScale {
    std::string_view suffix;
    double scale;
};
std::optional<std::int64_t> parse_with_unit(std::string_view text, std::span<const UnitScale> units,
                                            std::string_view kind, std::string_view examples, double min,
                                            std::string* why);

std::optional<std::int64_t> parse_int(std::string_view text);
std::optional<double> parse_double(std::string_view text);
// Splits "a,b, c" into trimmed items; empty items are kept so callers can report them.
std::vector<std::string> split_list(std::string_view text);
std::string_view trim(std::string_view text);
std::string join(const std::vector<std::string>& items, std::string_view separator);

}  // namespace inferbench
