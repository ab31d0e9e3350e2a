#include "devices/quantities.hpp"

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::devices {
namespace {

// Three significant digits at least, four above 1000: "989.5", "1979", "12.34".
std::string significant(double value) {
    if (value >= 1000) return fmt::format("{:.0f}", value);
    if (value >= 100) return fmt::format("{:.1f}", value);
    if (value >= 10) return fmt::format("{:.2f}", value);
    return fmt::format("{:.3f}", value);
}

}  // namespace

std::string format_rate(double per_second, bool integer) {
    if (!std::isfinite(per_second)) return "-";
    const char* unit_t = integer ? "TOPS" : "TFLOP/s";
    const char* unit_g = integer ? "GOPS" : "GFLOP/s";
    if (per_second >= 1e12) return fmt::format("{} {}", significant(per_second / 1e12), unit_t);
    return fmt::format("{} {}", significant(per_second / 1e9), unit_g);
}

std::string format_bandwidth(double bytes_per_second) {
    if (!std::isfinite(bytes_per_second)) return "-";
    if (bytes_per_second >= 1e12) return fmt::format("{:.2f} TB/s", bytes_per_second / 1e12);
    return fmt::format("{} GB/s", significant(bytes_per_second / 1e9));
}

std::string format_intensity(double per_byte, bool integer) {
    if (!std::isfinite(per_byte)) return "-";
    return fmt::format("{} {}", significant(per_byte), integer ? "OP/B" : "FLOP/B");
}

std::optional<std::int64_t> parse_byte_size(std::string_view text, std::string* why) {
    static constexpr std::pair<std::string_view, double> kUnits[] = {{"KiB", 1024.0},
                                                                     {"MiB", 1024.0 * 1024},
                                                                     {"GiB", 1024.0 * 1024 * 1024},
                                                                     {"kB", 1e3},
                                                                     {"KB", 1e3},
                                                                     {"MB", 1e6},
                                                                     {"GB", 1e9},
                                                                     {"B", 1.0}};
    text = trim(text);
    const auto fail = [&](std::string message) -> std::optional<std::int64_t> {
        if (why) *why = std::move(message);
        return std::nullopt;
    };
    const auto unit_start = text.find_first_not_of("0123456789.");
    if (unit_start == std::string_view::npos)
        return fail(fmt::format("'{}' has no unit; write e.g. 1GiB, 64MiB or 500MB", text));
    const auto number = parse_double(text.substr(0, unit_start));
    const std::string_view unit = trim(text.substr(unit_start));
    if (!number) return fail(fmt::format("'{}' is not a size; write e.g. 1GiB, 64MiB or 500MB", text));
    for (const auto& [suffix, scale] : kUnits) {
        if (unit != suffix) continue;
        const double bytes = *number * scale;
        if (bytes < 1 || bytes > static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2))
            return fail(fmt::format("'{}' is out of range", text));
        return static_cast<std::int64_t>(std::llround(bytes));
    }
    return fail(fmt::format("'{}' has an unknown unit '{}'; valid units: B, KiB, MiB, GiB, kB, MB, GB", text, unit));
}

std::string format_byte_size(std::int64_t bytes) {
    constexpr std::pair<std::int64_t, std::string_view> units[] = {
        {std::int64_t{1} << 30, "GiB"}, {std::int64_t{1} << 20, "MiB"}, {std::int64_t{1} << 10, "KiB"}};
    for (const auto& [size, suffix] : units) {
        if (bytes >= size && bytes % size == 0) return fmt::format("{} {}", bytes / size, suffix);
    }
    return fmt::format("{} B", bytes);
}

}  // namespace inferbench::devices
