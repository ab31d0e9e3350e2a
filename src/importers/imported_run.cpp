#include "importers/imported_run.hpp"

#include <chrono>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/version.hpp"

namespace inferbench::importers {

std::int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

store::RunRecord import_run(std::string_view tool, const std::string& name, const std::vector<std::string>& files) {
    store::RunRecord run;
    run.name = name;
    run.started_unix_ms = unix_ms_now();
    run.plan_json = nlohmann::json{{"import", tool}, {"logs", files}}.dump();
    run.environment_json = nlohmann::json{{"source", fmt::format("{} logs, measured elsewhere", tool)}}.dump();
    run.git_commit = std::string(kGitCommit);
    run.inferbench_version = std::string(kVersion);
    return run;
}

std::int64_t store_import(store::ResultsStore& results, const store::RunRecord& run,
                          std::span<const ImportedBenchmark> benchmarks) {
    const std::int64_t run_id = results.begin_run(run);
    for (std::size_t i = 0; i < benchmarks.size(); ++i) {
        const auto& benchmark = benchmarks[i];
        auto record = benchmark.record;
        record.run_id = run_id;
        record.ordinal = static_cast<std::int64_t>(i);
        results.add_benchmark(record, store::BenchmarkData{.metrics = benchmark.metrics,
                                                           .series = benchmark.series,
                                                           .gpu_samples = benchmark.gpu_samples,
                                                           .telemetry_sources = benchmark.telemetry_sources});
    }
    results.end_run(run_id, unix_ms_now(), RunStatus::completed);
    return run_id;
}

}  // namespace inferbench::importers
