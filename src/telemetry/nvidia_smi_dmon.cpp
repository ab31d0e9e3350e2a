// nvidia-smi dmon: a "# gpu pwr gtemp ..." header (repeated now and then), a units line, then one line
// per GPU and interval; with -o D/T/DT, Date (YYYYMMDD) and Time (HH:MM:SS) columns come first.
#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>

#include "core/units.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_detail.hpp"

namespace inferbench::telemetry::detail {
namespace {

struct DmonColumn {
    std::string_view name;
    std::optional<double> GpuSample::*member;
    double scale;  // to the sample's unit
};

// dmon's "sm" column is the GPU utilization (utilization.gpu); "pclk" the processor (graphics) clock;
// fb in MB that are MiB; rxpci / txpci in MB/s, read with the same 1024.
constexpr std::array<DmonColumn, 10> kColumns = {{
    {"pwr", &GpuSample::power_w, 1},
    {"gtemp", &GpuSample::temperature_c, 1},
    {"mtemp", &GpuSample::memory_temperature_c, 1},
    {"sm", &GpuSample::gpu_util_pct, 1},
    {"mem", &GpuSample::memory_util_pct, 1},
    {"mclk", &GpuSample::memory_clock_mhz, 1},
    {"pclk", &GpuSample::graphics_clock_mhz, 1},
    {"fb", &GpuSample::fb_used_mib, 1},
    {"rxpci", &GpuSample::pcie_rx_kib_s, 1024},
    {"txpci", &GpuSample::pcie_tx_kib_s, 1024},
}};

struct DmonRow {
    GpuSample sample;
    std::optional<std::int64_t> date_ms, time_ms;
};

std::optional<DmonRow> parse_row(const std::vector<std::string_view>& words, const std::vector<std::string>& columns,
                                 std::string& why) {
    DmonRow row;
    bool has_gpu = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string_view name = columns[i], word = words[i];
        if (name == "gpu") {
            const auto index = parse_int(word);
            has_gpu = index && *index >= 0 && *index <= 1023;
            if (has_gpu) row.sample.gpu_index = static_cast<int>(*index);
        } else if (name == "Date") {
            row.date_ms = parse_compact_date(word);
            if (!row.date_ms) why = fmt::format("date '{}' is not YYYYMMDD", word);
        } else if (name == "Time") {
            row.time_ms = parse_time_of_day_ms(word);
            if (!row.time_ms) why = fmt::format("time '{}' is not HH:MM:SS", word);
        } else if (const auto* column = std::find_if(kColumns.begin(), kColumns.end(),
                                                     [&](const DmonColumn& c) { return c.name == name; });
                   column != kColumns.end()) {
            const auto reading = parse_reading(word, "");
            if (reading.malformed) why = fmt::format("'{}' is not a reading of {}", word, name);
            if (reading.value) row.sample.*column->member = *reading.value * column->scale;
        }
        if (!why.empty()) return std::nullopt;
        if (name == "gpu" && !has_gpu) {
            why = fmt::format("gpu '{}' is not an index", word);
            return std::nullopt;
        }
    }
    return row;
}

}  // namespace

NvidiaSmiLog parse_dmon_log(std::string_view text, std::string_view /*file*/) {
    NvidiaSmiLog log;
    log.format = "dmon";
    std::vector<std::string> columns;
    std::vector<std::optional<std::int64_t>> stamps;
    bool dated = false;
    std::optional<std::int64_t> previous_time;
    std::int64_t days_passed = 0;  // -o T alone: time of day, so midnight is a jump back
    for (const auto& [number, line] : split_lines(text)) {
        const std::string_view trimmed = trim(line);
        if (trimmed.empty()) continue;
        if (trimmed.starts_with('#')) {
            const auto words = split_whitespace(trimmed.substr(1));
            if (std::find(words.begin(), words.end(), "gpu") != words.end()) columns.assign(words.begin(), words.end());
            continue;  // the units line ("# Idx W C ...")
        }
        const auto words = split_whitespace(trimmed);
        if (words.size() != columns.size()) {
            log.warnings.push_back(
                fmt::format("line {}: {} columns, expected {}; skipped", number, words.size(), columns.size()));
            continue;
        }
        std::string why;
        const auto row = parse_row(words, columns, why);
        if (!row) {
            log.warnings.push_back(fmt::format("line {}: {}; skipped", number, why));
            continue;
        }
        std::optional<std::int64_t> stamp;
        if (row->time_ms) {
            if (row->date_ms) {
                dated = true;
                stamp = *row->date_ms + *row->time_ms;
            } else {
                if (previous_time && *row->time_ms < *previous_time) ++days_passed;
                previous_time = row->time_ms;
                stamp = *row->time_ms + days_passed * 86'400'000;
            }
        }
        log.samples.push_back(row->sample);
        stamps.push_back(stamp);
    }
    assign_times(log, stamps, dated);
    return log;
}

}  // namespace inferbench::telemetry::detail
