// What the nvidia-smi parsers share, and the choice of parser from a log's content.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_detail.hpp"

namespace inferbench::telemetry {
namespace detail {

bool is_missing(std::string_view value) {
    value = trim(value);
    if (value.empty() || value == "-" || value == "N/A" || value == "Unknown" || value == "Not Supported" ||
        value == "Unknown Error" || value == "Insufficient Permissions")
        return true;
    // nvidia-smi brackets every non-value: [N/A], [Not Supported], [Unknown Error], [Insufficient Permissions].
    return value.front() == '[' && value.back() == ']';
}

bool apply_reading(GpuSample& sample, const Mapping& mapping, std::string_view text, std::string_view where,
                   std::vector<std::string>& warnings) {
    const Reading reading = parse_reading(text, mapping.unit);
    if (reading.malformed) warnings.push_back(fmt::format("{} is not a reading in {}; left out", where, mapping.unit));
    sample.*mapping.member = reading.value;
    return reading.value.has_value();
}

Reading parse_reading(std::string_view text, std::string_view unit) {
    text = trim(text);
    if (is_missing(text)) return {};
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || !std::isfinite(value)) return {std::nullopt, true};
    const std::string_view rest = trim(text.substr(static_cast<std::size_t>(end - text.data())));
    if (!rest.empty() && rest != unit) return {std::nullopt, true};
    return {value, false};
}

Reading parse_pstate(std::string_view text) {
    text = trim(text);
    if (is_missing(text)) return {};
    if (text.size() < 2 || text.front() != 'P') return {std::nullopt, true};
    const auto number = parse_int(text.substr(1));
    if (!number || *number < 0 || *number > 15) return {std::nullopt, true};
    return {static_cast<double>(*number), false};
}

std::optional<std::uint64_t> parse_hex_mask(std::string_view text) {
    text = trim(text);
    if (text.size() < 3 || text[0] != '0' || (text[1] != 'x' && text[1] != 'X')) return std::nullopt;
    std::uint64_t value = 0;
    const char* begin = text.data() + 2;
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(begin, end, value, 16);
    if (ec != std::errc() || stop != end) return std::nullopt;
    return value;
}

std::int64_t unix_ms(int year, int month, int day, int hour, int minute, int second, int millisecond) {
    using namespace std::chrono;
    const sys_days date{std::chrono::year{year} / std::chrono::month{static_cast<unsigned>(month)} /
                        std::chrono::day{static_cast<unsigned>(day)}};
    const auto time = hours{hour} + minutes{minute} + seconds{second} + milliseconds{millisecond};
    return duration_cast<milliseconds>(date.time_since_epoch() + time).count();
}

namespace {

// Years nvidia-smi can print; the bound also keeps ns differences of two stamps inside int64.
bool valid_date(int year, int month, int day) {
    return year >= 1970 && year <= 2200 && month >= 1 && month <= 12 && day >= 1 && day <= 31 &&
           (std::chrono::year{year} / std::chrono::month{static_cast<unsigned>(month)} /
            std::chrono::day{static_cast<unsigned>(day)})
               .ok();
}

// Reads a fixed-width decimal field of `width` digits at text[pos]; -1 if not digits.
int digits_at(std::string_view text, std::size_t pos, std::size_t width) {
    if (pos + width > text.size()) return -1;
    int value = 0;
    for (std::size_t i = pos; i < pos + width; ++i) {
        if (std::isdigit(static_cast<unsigned char>(text[i])) == 0) return -1;
        value = value * 10 + (text[i] - '0');
    }
    return value;
}

}  // namespace

std::optional<std::int64_t> parse_time_of_day_ms(std::string_view text) {
    text = trim(text);
    if (text.size() != 8 || text[2] != ':' || text[5] != ':') return std::nullopt;
    const int hour = digits_at(text, 0, 2), minute = digits_at(text, 3, 2), second = digits_at(text, 6, 2);
    if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 60) return std::nullopt;
    return ((static_cast<std::int64_t>(hour) * 60 + minute) * 60 + second) * 1000;
}

std::optional<std::int64_t> parse_q_timestamp(std::string_view text) {
    static constexpr std::string_view kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                   "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    const auto words = split_whitespace(text);  // Mon Nov 30 01:52:22 2026
    if (words.size() != 5) return std::nullopt;
    const auto month = std::find(std::begin(kMonths), std::end(kMonths), words[1]);
    const auto day = parse_int(words[2]);
    const auto year = parse_int(words[4]);
    const auto time = parse_time_of_day_ms(words[3]);
    if (month == std::end(kMonths) || !day || !year || !time) return std::nullopt;
    if (*year < 1970 || *year > 2200 || *day < 1 || *day > 31) return std::nullopt;
    const int month_number = static_cast<int>(month - std::begin(kMonths)) + 1;
    if (!valid_date(static_cast<int>(*year), month_number, static_cast<int>(*day))) return std::nullopt;
    return unix_ms(static_cast<int>(*year), month_number, static_cast<int>(*day), 0, 0, 0, 0) + *time;
}

std::optional<std::int64_t> parse_query_timestamp(std::string_view text) {
    text = trim(text);  // 2026/11/30 01:52:24.473
    if (text.size() != 23 || text[4] != '/' || text[7] != '/' || text[10] != ' ' || text[19] != '.')
        return std::nullopt;
    const int year = digits_at(text, 0, 4), month = digits_at(text, 5, 2), day = digits_at(text, 8, 2);
    const auto time = parse_time_of_day_ms(text.substr(11, 8));
    const int millisecond = digits_at(text, 20, 3);
    if (!valid_date(year, month, day) || !time || millisecond < 0) return std::nullopt;
    return unix_ms(year, month, day, 0, 0, 0, 0) + *time + millisecond;
}

std::optional<std::int64_t> parse_compact_date(std::string_view text) {
    text = trim(text);
    if (text.size() != 8) return std::nullopt;
    const int year = digits_at(text, 0, 4), month = digits_at(text, 4, 2), day = digits_at(text, 6, 2);
    if (!valid_date(year, month, day)) return std::nullopt;
    return unix_ms(year, month, day, 0, 0, 0, 0);
}

const std::vector<ReasonName>& reason_names() {
    static const std::vector<ReasonName> names = {
        {"Idle", "gpu_idle", clock_event::kGpuIdle},
        {"Applications Clocks Setting", "applications_clocks_setting", clock_event::kApplicationsClocksSetting},
        {"SW Power Cap", "sw_power_cap", clock_event::kSwPowerCap},
        {"HW Slowdown", "hw_slowdown", clock_event::kHwSlowdown},
        {"Sync Boost", "sync_boost", clock_event::kSyncBoost},
        {"SW Thermal Slowdown", "sw_thermal_slowdown", clock_event::kSwThermalSlowdown},
        {"HW Thermal Slowdown", "hw_thermal_slowdown", clock_event::kHwThermalSlowdown},
        {"HW Power Brake Slowdown", "hw_power_brake_slowdown", clock_event::kHwPowerBrakeSlowdown},
        {"Display Clock Setting", "display_clocks_setting", clock_event::kDisplayClockSetting},
    };
    return names;
}

void ReasonMask::add(std::uint64_t bit, std::string_view value) {
    value = trim(value);
    if (value == "Active") {
        bits_ |= bit;
        read_ = true;
    } else if (value == "Not Active") {
        read_ = true;
    }
}

std::vector<Line> split_lines(std::string_view text) {
    std::vector<Line> lines;
    std::size_t number = 1;
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        std::string_view line = text.substr(0, end);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        lines.push_back({number++, line});
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return lines;
}

std::vector<std::string_view> split_whitespace(std::string_view text) {
    std::vector<std::string_view> words;
    std::size_t pos = 0;
    while (pos < text.size()) {
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])) != 0) ++pos;
        const std::size_t begin = pos;
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos])) == 0) ++pos;
        if (pos > begin) words.push_back(text.substr(begin, pos - begin));
    }
    return words;
}

std::string lowercase(std::string_view text) {
    std::string lower(text);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return lower;
}

void assign_times(NvidiaSmiLog& log, const std::vector<std::optional<std::int64_t>>& stamps_ms, bool stamps_are_unix) {
    const auto first = std::find_if(stamps_ms.begin(), stamps_ms.end(), [](const auto& s) { return s.has_value(); });
    if (first == stamps_ms.end()) return;
    if (stamps_are_unix) log.first_unix_ms = **first;
    std::int64_t previous = **first;
    std::vector<GpuSample> kept;
    std::size_t backwards = 0;
    std::string first_backwards;
    for (std::size_t i = 0; i < log.samples.size(); ++i) {
        const auto stamp = i < stamps_ms.size() ? stamps_ms[i] : std::nullopt;
        if (stamp && *stamp < previous) {  // two logs out of order, or the clock set back: no time to give it
            if (backwards++ == 0)
                first_backwards = fmt::format("sample {} is {:.3f} s before the one it follows", i + 1,
                                              static_cast<double>(previous - *stamp) / 1e3);
            continue;
        }
        if (stamp) previous = *stamp;
        log.samples[i].t_ns = (previous - **first) * 1'000'000;
        kept.push_back(log.samples[i]);
    }
    if (backwards > 0)
        log.warnings.push_back(fmt::format("{} sample{} whose time goes backwards left out ({})", backwards,
                                           backwards == 1 ? "" : "s", first_backwards));
    log.samples = std::move(kept);
}

namespace {

// The range each reading can have: a value outside is a broken log, not a measurement.
struct ReadingBounds {
    std::optional<double> GpuSample::*member;
    std::string_view name;
    double max;
};
// No board draws 10 kW, no clock runs at 10 GHz, no GPU holds 16 TiB, no PCIe link moves 1 TB/s.
constexpr double kMaxMib = 16.0 * 1024 * 1024;
const std::array<ReadingBounds, 15> kBounds = {{
    {&GpuSample::power_w, "power", 10'000},
    {&GpuSample::power_avg_w, "average power", 10'000},
    {&GpuSample::power_limit_w, "power limit", 10'000},
    {&GpuSample::energy_mj, "energy", 1e18},
    {&GpuSample::temperature_c, "temperature", 200},
    {&GpuSample::memory_temperature_c, "memory temperature", 200},
    {&GpuSample::sm_clock_mhz, "SM clock", 10'000},
    {&GpuSample::memory_clock_mhz, "memory clock", 10'000},
    {&GpuSample::graphics_clock_mhz, "graphics clock", 10'000},
    {&GpuSample::gpu_util_pct, "GPU utilization", 100},
    {&GpuSample::memory_util_pct, "memory utilization", 100},
    {&GpuSample::fb_used_mib, "memory used", kMaxMib},
    {&GpuSample::fb_total_mib, "memory total", kMaxMib},
    {&GpuSample::pcie_tx_kib_s, "PCIe TX", 1e9},
    {&GpuSample::pcie_rx_kib_s, "PCIe RX", 1e9},
}};

bool has_reading(const GpuSample& sample) {
    return sample.pstate || sample.clock_event_reasons ||
           std::ranges::any_of(kBounds, [&](const ReadingBounds& bound) { return (sample.*bound.member).has_value(); });
}

// Leaves out every reading no GPU can give (negative, or beyond its bound), with one warning that
// counts them and names the first.
void drop_impossible_readings(NvidiaSmiLog& log) {
    std::size_t dropped = 0;
    std::string first;
    for (auto& sample : log.samples) {
        for (const auto& bound : kBounds) {
            auto& reading = sample.*bound.member;
            if (!reading || (*reading >= 0 && *reading <= bound.max)) continue;
            if (dropped++ == 0)
                first = fmt::format("{} {:g} of GPU {} at {:.3f} s", bound.name, *reading, sample.gpu_index,
                                    ns_to_s(sample.t_ns));
            reading.reset();
        }
    }
    if (dropped > 0)
        log.warnings.push_back(fmt::format("{} reading{} no GPU can give left out (first: {})", dropped,
                                           dropped == 1 ? "" : "s", first));
    std::erase_if(log.samples, [](const GpuSample& sample) { return !has_reading(sample); });
}

}  // namespace

void note_gpu_name(NvidiaSmiLog& log, int index, std::string_view name) {
    name = trim(name);
    if (index < 0 || name.empty() || is_missing(name)) return;
    const auto slot = static_cast<std::size_t>(index);
    if (log.gpu_names.size() <= slot) log.gpu_names.resize(slot + 1);
    if (log.gpu_names[slot].empty()) log.gpu_names[slot] = std::string(name);
}

// The banner opens each dump; a script's own lines (e.g. `date`) may come before it.
bool looks_like_q_text(std::string_view text) {
    for (std::size_t at = text.find("NVSMI LOG"); at != std::string_view::npos; at = text.find("NVSMI LOG", at + 1)) {
        const std::size_t begin = text.rfind('\n', at) == std::string_view::npos ? 0 : text.rfind('\n', at) + 1;
        if (trim(text.substr(begin, at - begin)).starts_with("=====")) return true;
    }
    return false;
}

bool looks_like_q_xml(std::string_view text) {
    text = trim(text);
    return text.starts_with("<?xml") || text.starts_with("<!DOCTYPE nvidia_smi_log") ||
           text.starts_with("<nvidia_smi_log");
}

bool looks_like_dmon(std::string_view first_line) {
    first_line = trim(first_line);
    if (!first_line.starts_with('#')) return false;
    const auto words = split_whitespace(first_line.substr(1));
    return std::find(words.begin(), words.end(), "gpu") != words.end();
}

}  // namespace detail

namespace {

std::string_view first_nonblank_line(std::string_view text) {
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        if (!trim(line).empty()) return line;
        if (end == std::string_view::npos) break;
        text.remove_prefix(end + 1);
    }
    return {};
}

}  // namespace

NvidiaSmiLog parse_nvidia_smi_log(std::string_view text, std::string_view file_name_for_errors,
                                  const std::vector<std::string>& headerless_csv_fields) {
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);  // a BOM from an editor on the way
    const std::string_view first_line = first_nonblank_line(text);
    if (first_line.empty())
        throw UserError(
            fmt::format("{}: the file is empty; expected nvidia-smi -q, -q -x, --query-gpu CSV or dmon output",
                        file_name_for_errors));
    NvidiaSmiLog log;
    if (detail::looks_like_q_xml(text)) {
        log = detail::parse_q_xml_log(text, file_name_for_errors);
    } else if (detail::looks_like_q_text(text)) {
        log = detail::parse_q_text_log(text, file_name_for_errors);
    } else if (detail::looks_like_dmon(first_line)) {
        log = detail::parse_dmon_log(text, file_name_for_errors);
    } else if (detail::looks_like_query_csv(first_line, headerless_csv_fields)) {
        log = detail::parse_query_csv_log(text, file_name_for_errors, headerless_csv_fields);
    } else {
        const auto& csv_fields = headerless_csv_fields.empty() ? nvidia_smi_query_fields() : headerless_csv_fields;
        const auto columns = std::count(first_line.begin(), first_line.end(), ',') + 1;
        throw UserError(fmt::format(
            "{}: not an nvidia-smi log (expected -q, -q -x, --query-gpu CSV or dmon output){}", file_name_for_errors,
            columns == 1 ? ""
                         : fmt::format("; a --query-gpu CSV without header line needs the fields it was queried "
                                       "with: its first line has {} columns, the field list {}",
                                       columns, csv_fields.size())));
    }
    detail::drop_impossible_readings(log);
    if (log.samples.empty()) {
        throw UserError(fmt::format("{}: nvidia-smi {} output without a single GPU reading in it (cut short?){}",
                                    file_name_for_errors, log.format,
                                    log.warnings.empty() ? "" : "; first problem: " + log.warnings.front()));
    }
    return log;
}

}  // namespace inferbench::telemetry
