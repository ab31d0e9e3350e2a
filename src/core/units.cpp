#include "core/units.hpp"

#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/time_units.hpp"

namespace inferbench {
namespace {

constexpr UnitScale kDurationUnits[] = {{"ns", 1.0}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
                                        {"m", 60e9},  {"min", 60e9}, {"h", 3600e9}};

}  // namespace

std::string_view trim(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r\n");
    return text.substr(first, last - first + 1);
}

std::optional<std::int64_t> parse_int(std::string_view text) {
    text = trim(text);
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
    return value;
}

std::optional<double> parse_double(std::string_view text) {
    text = trim(text);
    double value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value))
        return std::nullopt;
    return value;
}

std::optional<std::int64_t> parse_with_unit(std::string_view text, std::span<const UnitScale> units,
                                            std::string_view kind, std::string_view examples, double min,
                                            std::string* why) {
    text = trim(text);
    const auto fail = [&](std::string message) -> std::optional<std::int64_t> {
        if (why) *why = std::move(message);
        return std::nullopt;
    };
    const auto unit_start = text.find_first_not_of("0123456789.");
    if (unit_start == std::string_view::npos) return fail(fmt::format("'{}' has no unit; write e.g. {}", text, examples));
    const auto value = parse_double(text.substr(0, unit_start));
    const std::string_view suffix = trim(text.substr(unit_start));
    if (!value) return fail(fmt::format("'{}' is not a {}; write e.g. {}", text, kind, examples));
    std::string valid;
    for (const auto& unit : units) {
        valid += (valid.empty() ? "" : ", ") + std::string(unit.suffix);
        if (suffix != unit.suffix) continue;
        const double scaled = *value * unit.scale;
        if (scaled < min || scaled > static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2))
            return fail(fmt::format("'{}' is out of range", text));
        return static_cast<std::int64_t>(std::llround(scaled));
    }
    return fail(fmt::format("'{}' has an unknown unit '{}'; valid units: {}", text, suffix, valid));
}

std::optional<std::int64_t> parse_duration_ns(std::string_view text, std::string* why) {
    return parse_with_unit(text, kDurationUnits, "duration", "10s, 500ms or 2m", 0, why);
}

std::string format_duration(std::int64_t ns) {
    constexpr std::pair<std::int64_t, std::string_view> units[] = {
        {3'600'000'000'000, "h"}, {60'000'000'000, "m"}, {1'000'000'000, "s"},
        {1'000'000, "ms"},        {1'000, "us"}};
    if (ns == 0) return "0s";
    for (const auto& [size, suffix] : units) {
        if (ns % size == 0) return fmt::format("{}{}", ns / size, suffix);
    }
    return fmt::format("{}ns", ns);
}

std::string format_latency(double ns) {
    if (!std::isfinite(ns)) return "-";
    if (ns < 1e3) return fmt::format("{:.0f} ns", ns);
    if (ns < 1e6) return fmt::format("{:.2f} us", ns_to_us(ns));
    if (ns < 1e9) return fmt::format("{:.2f} ms", ns_to_ms(ns));
    return fmt::format("{:.3f} s", ns_to_s(ns));
}

std::vector<std::string> split_list(std::string_view text) {
    std::vector<std::string> items;
    std::size_t begin = 0;
    while (true) {
        const auto comma = text.find(',', begin);
        items.emplace_back(trim(text.substr(begin, comma - begin)));
        if (comma == std::string_view::npos) break;
        begin = comma + 1;
    }
    return items;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += separator;
        out += items[i];
    }
    return out;
}

}  // namespace inferbench
