// A results database for the HTML report's tests: hostile names (a model named <script>, quotes and
// ampersands, an <img onerror> in a failure reason), long iteration series with spikes, GPU and CPU
// telemetry, a failed benchmark and a batch sweep.
#pragma once

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/metrics/model_metrics.hpp"
#include "store/results_store.hpp"

namespace inferbench::report::testing {

inline constexpr const char* kScriptModel = "<script>alert(1)</script>";
inline constexpr const char* kQuotesModel = "\"quotes' & ampersands";
inline constexpr const char* kImgModel = "<img src=x onerror=alert(2)>";
inline constexpr std::int64_t kFixtureT0 = 7'000'000'000;
inline constexpr int kLongIterations = 20'000;
// The spike planted in the long series: min/max bucketing must keep it.
inline constexpr std::int64_t kSpikeNs = 25'000'000;
inline constexpr std::size_t kSpikeAt = 12'345;

inline std::vector<IterationRecord> fixture_iterations(int count, std::int64_t base_ns, bool spike) {
    std::vector<IterationRecord> iterations;
    std::int64_t t = kFixtureT0;
    for (int i = 0; i < count; ++i) {
        IterationRecord it;
        it.start_ns = t;
        it.e2e_ns = base_ns + (i % 97) * 1'000;  // a sawtooth
        if (spike && static_cast<std::size_t>(i) == kSpikeAt) it.e2e_ns = kSpikeNs;
        it.compute_ns = it.e2e_ns - 50'000;
        iterations.push_back(it);
        t += it.e2e_ns + 10'000;
    }
    return iterations;
}

inline std::vector<GpuSample> fixture_gpu_samples(int count, double watts) {
    std::vector<GpuSample> samples;
    for (int i = 0; i < count; ++i) {
        GpuSample s;
        s.t_ns = kFixtureT0 - 200'000'000 + i * 10'000'000LL;
        s.phase = i < 20 ? SamplePhase::warmup : SamplePhase::measure;
        s.power_w = watts + 20 * std::sin(i / 10.0);
        s.energy_mj = 1'000'000 + i * watts * 10;
        s.temperature_c = 55 + i * 0.05;
        s.sm_clock_mhz = i % 50 == 0 ? 1500 : 1980;
        s.gpu_util_pct = 95;
        s.fb_used_mib = 8000 + i;
        s.fb_total_mib = 143'771;
        s.clock_event_reasons = i % 50 == 0 ? clock_event::kSwPowerCap : 0;
        samples.push_back(s);
    }
    return samples;
}

inline std::vector<CpuSample> fixture_cpu_samples(int count) {
    std::vector<CpuSample> samples;
    for (int i = 0; i < count; ++i) {
        CpuSample s;
        s.t_ns = kFixtureT0 + i * 100'000'000LL;
        s.process_cpu_pct = 98.0 + i % 5;
        s.process_rss_mib = 900 + i;
        s.host_cpu_pct = 55;
        samples.push_back(s);
    }
    return samples;
}

inline store::BenchmarkRecord fixture_record(std::int64_t run_id, const std::string& model, const std::string& backend,
                                             const std::string& device, const std::string& precision,
                                             std::int64_t batch) {
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.model = model;
    b.backend = backend;
    b.device = device;
    b.precision = precision;
    b.batch_size = batch;
    b.status = BenchmarkStatus::ok;
    b.started_unix_ms = b.ended_unix_ms = 1'700'000'000'000;
    b.model_size_bytes = 102'000'000;
    b.settings_json = "{}";
    return b;
}

// Writes the fixture to `db`; returns the run id.
inline std::int64_t write_html_fixture(const std::filesystem::path& db) {
    auto results = store::ResultsStore::open(db);
    store::RunRecord run;
    run.name = "html <b>test</b> & run";
    run.started_unix_ms = 1'700'000'000'000;
    run.host = "gpu01";
    run.git_commit = "abc123def456";
    run.inferbench_version = "0.1.0";
    run.environment_json =
        nlohmann::json{{"host", "gpu01"},
                       {"cpu_model", "AMD EPYC 9654 <96-Core>"},
                       {"libraries", {{"sqlite", "3.40.1"}}},
                       {"gpus", {{"source", "nvml"}, {"devices", {{{"index", 0}, {"name", "NVIDIA H200"}}}}}}}
            .dump();
    const auto run_id = results.begin_run(run);
    const std::vector<TelemetrySource> sources = {
        {"nvml", "ok", ""}, {"procfs", "ok", ""}, {"rapl", "unavailable", "no <powercap> access"}};
    std::int64_t ordinal = 0;
    for (const std::int64_t batch : {1, 8, 32}) {
        auto record = fixture_record(run_id, kScriptModel, "torch", "cuda:0", "fp16", batch);
        record.ordinal = ordinal++;
        const auto iterations = fixture_iterations(batch == 8 ? kLongIterations : 400, 1'000'000 * batch, batch == 8);
        const auto gpu = fixture_gpu_samples(120, 300.0 + 10.0 * static_cast<double>(batch));
        const auto cpu = fixture_cpu_samples(15);
        // The model's cost, so that the benchmark is placed on the H200's roofline.
        const std::vector<store::Metric> cost = {{std::string(model_metrics::kFlopsPerInference), 8.2e9, "FLOP"},
                                                 {std::string(model_metrics::kBytesPerInference), 1.6e8, "B"}};
        results.add_benchmark(record, store::BenchmarkData{.iterations = iterations,
                                                           .metrics = cost,
                                                           .gpu_samples = gpu,
                                                           .cpu_samples = cpu,
                                                           .telemetry_sources = sources});
    }
    for (const std::int64_t batch : {1, 4}) {
        auto record = fixture_record(run_id, kQuotesModel, "onnxruntime", "cpu", "fp32", batch);
        record.ordinal = ordinal++;
        record.variant = "threads=<2>";
        const auto iterations = fixture_iterations(300, 5'000'000 * batch, false);
        const auto cpu = fixture_cpu_samples(10);
        results.add_benchmark(record, store::BenchmarkData{.iterations = iterations, .cpu_samples = cpu});
    }
    auto failed = fixture_record(run_id, kImgModel, "tensorrt", "cuda:0", "int8", 1);
    failed.ordinal = ordinal++;
    failed.status = BenchmarkStatus::failed;
    failed.reason = "worker crashed: <b>boom</b> & \"more\"";
    results.add_benchmark(failed);
    results.end_run(run_id, 1'700'000'100'000, RunStatus::completed);
    return run_id;
}

inline std::string read_text(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::size_t occurrences(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

// The JSON of <script type="application/json" id="data"> in a page.
inline nlohmann::json page_data(const std::string& page) {
    const std::string open = "<script type=\"application/json\" id=\"data\">";
    const auto begin = page.find(open);
    if (begin == std::string::npos) return nullptr;
    const auto end = page.find("</script>", begin);
    return nlohmann::json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

}  // namespace inferbench::report::testing
