// trtexec logs (its console output) as benchmarks: the performance summary as metrics, the trace
// averages as series, the command line's model, device, precision and batch as the row.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "importers/imported_run.hpp"

namespace inferbench::importers {

// The log `text`, read from `file`, as one benchmark. UserError for a log without a whole summary of
// possible figures: an `ok` benchmark with figures missing or made up would be shown as measured.
// Without a command line in the log, trtexec's defaults: fp32 (TF32 allowed), batch 1, device 0.
ImportedBenchmark trtexec_benchmark(const std::string& file, std::string_view text, const ImportOverrides& overrides);

// Every file read and checked before any is returned: a bad one leaves the database alone.
std::vector<ImportedBenchmark> read_trtexec_logs(const std::vector<std::string>& files,
                                                 const ImportOverrides& overrides);

}  // namespace inferbench::importers
