// What the four nvidia-smi parsers share: readings with units, nvidia-smi's "no value" markers, its
// timestamps, the clock event reason names, line splitting. Private to src/telemetry.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/nvidia_smi.hpp"

namespace inferbench::telemetry::detail {

// "N/A", "[N/A]", "[Not Supported]", "[Unknown Error]", "Unknown", "" and dmon's "-": no reading.
bool is_missing(std::string_view value);

// A number that may be followed by its unit: absent (a missing marker), a value, or malformed.
struct Reading {
    std::optional<double> value;
    bool malformed = false;
};
// "250.12 W" or "250.12" with unit "W"; "34 C", "34" with "C"; a different unit is malformed.
Reading parse_reading(std::string_view text, std::string_view unit);
// Where a GpuSample metric stands in a -q or -q -x dump, with its unit.
struct Mapping {
    std::optional<double> GpuSample::*member;
    std::string_view unit;
    std::array<std::string_view, 4> paths;  // the first one present wins
};
// Sets the mapping's metric of `sample` from `text`; a malformed reading is left out with the warning
// "<where> is not a reading in UNIT; left out". Returns whether a value was set.
bool apply_reading(GpuSample& sample, const Mapping& mapping, std::string_view text, std::string_view where,
                   std::vector<std::string>& warnings);

// "P0" -> 0 .. "P15" -> 15.
Reading parse_pstate(std::string_view text);
// "0x0000000000000004" -> 4.
std::optional<std::uint64_t> parse_hex_mask(std::string_view text);

// Civil time in UTC to ms since the epoch; nvidia-smi prints local time without its zone.
std::int64_t unix_ms(int year, int month, int day, int hour, int minute, int second, int millisecond);
// -q and -q -x: "Mon Nov 30 01:52:22 2026".
std::optional<std::int64_t> parse_q_timestamp(std::string_view text);
// --query-gpu timestamp: "2026/11/30 01:52:24.473".
std::optional<std::int64_t> parse_query_timestamp(std::string_view text);
// dmon -o D: "20261130" -> its midnight.
std::optional<std::int64_t> parse_compact_date(std::string_view text);
// "01:52:24" -> ms since midnight.
std::optional<std::int64_t> parse_time_of_day_ms(std::string_view text);

// One clock event reason as -q prints it ("SW Power Cap") and as -q -x names its element
// ("sw_power_cap" in clocks_event_reason_sw_power_cap / clocks_throttle_reason_sw_power_cap).
struct ReasonName {
    std::string_view text_label;
    std::string_view xml_suffix;
    std::uint64_t bit;
};
const std::vector<ReasonName>& reason_names();

// "Active" / "Not Active" readings of reasons folded into a mask: absent while none was read.
class ReasonMask {
public:
    void add(std::uint64_t bit, std::string_view value);
    std::optional<std::uint64_t> mask() const { return read_ ? std::optional<std::uint64_t>(bits_) : std::nullopt; }

private:
    std::uint64_t bits_ = 0;
    bool read_ = false;
};

struct Line {
    std::size_t number;     // from 1
    std::string_view text;  // without its line ending ("\n" or "\r\n")
};
std::vector<Line> split_lines(std::string_view text);
std::vector<std::string_view> split_whitespace(std::string_view text);
std::string lowercase(std::string_view text);

// Per sample the wall-clock (or time-of-day) it was taken, in ms, where the log says it: sets t_ns
// relative to the first stamp (a sample without one takes its predecessor's), and first_unix_ms when
// `stamps_are_unix`. No stamp at all leaves every t_ns 0.
void assign_times(NvidiaSmiLog& log, const std::vector<std::optional<std::int64_t>>& stamps_ms, bool stamps_are_unix);
// Records `name` as the GPU at `index` unless already known.
void note_gpu_name(NvidiaSmiLog& log, int index, std::string_view name);

bool looks_like_q_text(std::string_view text);  // the whole text
bool looks_like_q_xml(std::string_view text);
bool looks_like_dmon(std::string_view first_line);
bool looks_like_query_csv(std::string_view first_line, const std::vector<std::string>& headerless_fields);

// Each throws UserError ("FILE: line N: ...") where the file cannot be read as its format at all, and
// records skipped lines and sections in warnings.
NvidiaSmiLog parse_query_csv_log(std::string_view text, std::string_view file,
                                 const std::vector<std::string>& headerless_fields);
NvidiaSmiLog parse_q_text_log(std::string_view text, std::string_view file);
NvidiaSmiLog parse_q_xml_log(std::string_view text, std::string_view file);
NvidiaSmiLog parse_dmon_log(std::string_view text, std::string_view file);

}  // namespace inferbench::telemetry::detail
