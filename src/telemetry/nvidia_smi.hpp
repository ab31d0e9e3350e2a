// nvidia-smi's outputs read as GPU samples: the telemetry sampler's fallback where NVML cannot be
// opened but nvidia-smi runs (`--query-gpu=... --format=csv,noheader,nounits -lms N`, one line per
// GPU and period), and `inferbench import nvidia-smi` of logs written elsewhere: `-q` text dumps (one
// or many concatenated), `-q -x` XML, `--query-gpu` CSV (with or without header and units) and `dmon`.
// Parsers take the text, not a path, so that tests feed strings. A reading nvidia-smi marks "N/A",
// "[N/A]", "[Not Supported]", "[Unknown Error]" ... is left empty, never 0.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/samples.hpp"

namespace inferbench::telemetry {

// The --query-gpu fields inferbench asks for, in order: "index" first, then every GpuSample metric that
// --query-gpu can report (power.draw.instant, power.draw.average, enforced.power.limit, temperatures,
// clocks, utilizations, memory, pstate, clocks_event_reasons.active). No timestamp: the sampler stamps
// lines on receipt. These names need driver 535 or later (power.draw.instant, clocks_event_reasons);
// see nvidia_smi_supported_query_fields for older drivers.
const std::vector<std::string>& nvidia_smi_query_fields();

// The fields above that the driver knows, from the text of `nvidia-smi --help-query-gpu`, which names
// each field in double quotes: an unknown name makes the whole query fail. Where a name is missing,
// its older spelling is taken if listed (power.draw.instant -> power.draw, clocks_event_reasons.active
// -> clocks_throttle_reasons.active, enforced.power.limit -> power.limit), else the field is left out.
std::vector<std::string> nvidia_smi_supported_query_fields(std::string_view help_query_gpu_text);

// argv for the streaming fallback: {"nvidia-smi", "--query-gpu=<fields joined by ,>",
// "--format=csv,noheader,nounits", "-lms", "<period>"} (+ "-i", "<gpu>" when given).
std::vector<std::string> nvidia_smi_query_command(int period_ms, std::optional<int> gpu_index = std::nullopt);
// The same with other fields (e.g. those of nvidia_smi_supported_query_fields).
std::vector<std::string> nvidia_smi_query_command(int period_ms, std::optional<int> gpu_index,
                                                  const std::vector<std::string>& fields);

// One --query-gpu CSV line with `fields` (names as asked for or as the header prints them, units in
// brackets allowed: "power.draw [W]") -> a sample (gpu_index from the "index" field, else 0; t_ns 0).
// Values with or without their units ("250.12 W" or "250.12"). "[N/A]", "N/A", "[Not Supported]" ->
// absent. Fields that are no GpuSample metric (name, uuid, timestamp, ...) are skipped. nullopt when
// malformed: wrong column count, an unparsable number, a unit that is not the field's.
std::optional<GpuSample> parse_nvidia_smi_query_line(std::string_view line, const std::vector<std::string>& fields);

// A whole log file of any of the four formats, detected from its content.
struct NvidiaSmiLog {
    std::string format;              // "query-csv", "q-text", "q-xml", "dmon"
    std::vector<GpuSample> samples;  // t_ns = ns since the log's first timestamp (0 for all when the log has no time)
    std::optional<std::int64_t> first_unix_ms;  // wall-clock of the first sample, where the log says it
    std::vector<std::string> gpu_names;         // by index, where the log says them ("NVIDIA H200")
    std::string driver_version, cuda_version;   // where present
    std::vector<std::string> warnings;          // e.g. "line 12: 3 columns, expected 17; skipped"
};

// Throws UserError for unrecognised content: "FILE: not an nvidia-smi log (expected -q, -q -x,
// --query-gpu CSV or dmon output)", and for a log of a known format with no sample in it.
// nvidia-smi prints local time without a zone: first_unix_ms reads it as UTC. -q and -q -x do not
// print GPU indices: GPUs are numbered in the order of their sections (a log of `-q -i 3` says 0).
// `headerless_csv_fields`: the columns of a --query-gpu CSV written with `noheader` (default: those
// of nvidia_smi_query_fields, the sampler's own).
NvidiaSmiLog parse_nvidia_smi_log(std::string_view text, std::string_view file_name_for_errors,
                                  const std::vector<std::string>& headerless_csv_fields = {});

}  // namespace inferbench::telemetry
