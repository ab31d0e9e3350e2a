// Benchmarks read from another tool's logs, owned until they are stored as one run of their own.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/samples.hpp"
#include "store/results_store.hpp"

namespace inferbench::importers {

// What the command line says over a log's own facts; empty: what the log says.
struct ImportOverrides {
    std::string model;
    std::string device;
};

// One benchmark read from a log: its row and everything measured with it.
struct ImportedBenchmark {
    store::BenchmarkRecord record;  // run_id and ordinal are given when it is stored
    std::vector<store::Metric> metrics;
    std::vector<store::Series> series;
    std::vector<GpuSample> gpu_samples;
    std::vector<TelemetrySource> telemetry_sources;
};

std::int64_t unix_ms_now();

// The run that holds the logs of `tool` ("trtexec", "nvidia-smi"), started now.
store::RunRecord import_run(std::string_view tool, const std::string& name, const std::vector<std::string>& files);

// `benchmarks` stored in their order as `run`, which is then completed; returns the run's id.
std::int64_t store_import(store::ResultsStore& results, const store::RunRecord& run,
                          std::span<const ImportedBenchmark> benchmarks);

}  // namespace inferbench::importers
