// nvidia-smi logs (-q text, -q -x XML, --query-gpu CSV, dmon) as benchmarks: one per file, its
// samples as the measure phase's GPU telemetry.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "importers/imported_run.hpp"
#include "telemetry/nvidia_smi.hpp"

namespace inferbench::importers {

struct ImportedSmiLog {
    std::string file;
    telemetry::NvidiaSmiLog log;
    ImportedBenchmark benchmark;
};

// The GPU indices the log watched, and the time from its first sample to its last.
std::set<int> gpu_indices(const telemetry::NvidiaSmiLog& log);
std::int64_t span_ns(const telemetry::NvidiaSmiLog& log);
// The GPU names the log says, each once, in their order.
std::vector<std::string> distinct_gpu_names(const telemetry::NvidiaSmiLog& log);

// The power the log read: its instantaneous readings, else nvidia-smi's 1 s averages; none without either.
struct SmiPower {
    bool one_second_average = false;
    double mean_w = 0;
    double max_w = 0;
};
std::optional<SmiPower> power_of(const telemetry::NvidiaSmiLog& log);
// Every clock event reason a sample shows; none when no sample reports them.
std::optional<std::uint64_t> clock_event_reasons_seen(const telemetry::NvidiaSmiLog& log);

// The run's name when none is given: "import nvidia-smi" and the files' names.
std::string default_run_name(const std::vector<std::string>& files);

// The log `text`, read from `file`, as one benchmark: the model is the file's name and the device
// cuda:N for one GPU, "gpu" for several, unless `overrides` say otherwise. `headerless_csv_fields`
// are the columns of a --query-gpu CSV written without header.
ImportedSmiLog nvidia_smi_benchmark(const std::string& file, std::string_view text, const ImportOverrides& overrides,
                                    const std::vector<std::string>& headerless_csv_fields);

// Every file read and parsed before any is returned: a bad one leaves the database alone.
std::vector<ImportedSmiLog> read_nvidia_smi_logs(const std::vector<std::string>& files,
                                                 const ImportOverrides& overrides,
                                                 const std::vector<std::string>& headerless_csv_fields);

}  // namespace inferbench::importers
