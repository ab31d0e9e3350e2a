#include "devices/quantities.hpp"

#include <cmath>
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
    static constexpr UnitScale kUnits[] = {{"B", 1.0},  {"KiB", 1024.0}, {"MiB", 1024.0 * 1024}, {"GiB", 1024.0 * 1024 * 1024},
                                           {"kB", 1e3}, {"KB", 1e3},     {"MB", 1e6},            {"GB", 1e9}};
    return parse_with_unit(text, kUnits, "size", "1GiB, 64MiB or 500MB", 1, why);
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
