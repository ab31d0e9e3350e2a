// Small results databases built through the store API, read back as the rules read them
// (findings::load_evidence), and the iterations, samples and layers they are built from.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "devices/catalog.hpp"
#include "findings/evidence.hpp"
#include "findings/finding.hpp"
#include "store/results_store.hpp"

namespace inferbench::findings::testing {

inline constexpr std::int64_t kT0 = 10'000'000'000;  // CLOCK_MONOTONIC of the first measured iteration

// One benchmark to store: its row and what was measured for it.
struct StoredBenchmark {
    store::BenchmarkRecord record;
    std::vector<IterationRecord> iterations;
    std::vector<store::Metric> metrics;
    std::vector<store::Series> series;
    std::vector<GpuSample> gpu;
    std::vector<CpuSample> cpu;
    std::vector<LayerTime> layers;
};

inline StoredBenchmark benchmark(std::string device = "cuda:0", std::string precision = "fp16", std::int64_t batch = 1,
                                 std::string backend = "tensorrt") {
    StoredBenchmark b;
    b.record.model = "resnet50";
    b.record.backend = std::move(backend);
    b.record.device = std::move(device);
    b.record.precision = std::move(precision);
    b.record.batch_size = batch;
    b.record.status = BenchmarkStatus::ok;
    b.record.settings_json = "{}";
    return b;
}

// `count` iterations one after another from kT0, the i-th taking e2e(i) ns.
template <typename F>
std::vector<IterationRecord> iterations(int count, F e2e) {
    std::vector<IterationRecord> out;
    std::int64_t t = kT0;
    for (int i = 0; i < count; ++i) {
        IterationRecord it;
        it.start_ns = t;
        it.e2e_ns = static_cast<std::int64_t>(e2e(i));
        t += it.e2e_ns;
        out.push_back(it);
    }
    return out;
}

// A small deterministic jitter in [-1, 1] (no random numbers: every run of a test sees the same data).
inline double jitter(int i) { return static_cast<double>((i * 7919) % 201 - 100) / 100.0; }

inline GpuSample gpu_sample(std::int64_t t_ns, double sm_clock_mhz, std::uint64_t reasons) {
    GpuSample s;
    s.t_ns = t_ns;
    s.phase = SamplePhase::measure;
    s.sm_clock_mhz = sm_clock_mhz;
    s.clock_event_reasons = reasons;
    s.power_w = 500;
    return s;
}

inline CpuSample cpu_sample(std::int64_t t_ns, std::vector<double> per_core, double rss_mib) {
    CpuSample s;
    s.t_ns = t_ns;
    s.phase = SamplePhase::measure;
    double sum = 0;
    for (const double c : per_core) sum += c;
    s.process_cpu_pct = sum;
    s.process_cpu_pct_per_core = std::move(per_core);
    s.process_rss_mib = rss_mib;
    return s;
}

// Stores the benchmarks as one run of a fresh database and loads them back.
class StoredRun {
public:
    explicit StoredRun(std::vector<StoredBenchmark> benchmarks) {
        auto results = store::ResultsStore::open(dir_.file("results.db"));
        store::RunRecord run;
        run.name = "findings-test";
        run.plan_json = "{}";
        run.environment_json = "{}";
        const auto run_id = results.begin_run(run);
        std::int64_t ordinal = 0;
        for (auto& b : benchmarks) {
            b.record.run_id = run_id;
            // A repeat (repeat > 0) is of the cell before it: the run's repeats stored one after another.
            b.record.ordinal = b.record.repeat > 0 ? ordinal - 1 : ordinal++;
            if (!b.iterations.empty() && !b.record.measured_wall_ns)
                b.record.measured_wall_ns =
                    b.iterations.back().start_ns + b.iterations.back().e2e_ns - b.iterations.front().start_ns;
            results.add_benchmark(b.record, {.iterations = b.iterations, .metrics = b.metrics, .series = b.series,
                                             .gpu_samples = b.gpu, .cpu_samples = b.cpu, .layer_times = b.layers});
        }
        results.end_run(run_id, 1, RunStatus::completed);
        const auto stored = results.benchmarks(run_id);
        evidence_ = load_evidence(results, stored, devices::load_catalog());
    }
    const std::vector<BenchmarkEvidence>& evidence() const { return evidence_; }
    const BenchmarkEvidence& at(std::size_t i) const { return evidence_.at(i); }
    std::string path() const { return dir_.file("results.db"); }

private:
    inferbench::testing::ScratchDir dir_;
    std::vector<BenchmarkEvidence> evidence_;
};

inline std::vector<std::string> ids(const std::vector<Finding>& findings) {
    std::vector<std::string> out;
    for (const auto& f : findings) out.push_back(f.id);
    return out;
}

inline const Finding& only(const std::vector<Finding>& findings, const std::string& id) {
    const auto it = std::find_if(findings.begin(), findings.end(), [&](const Finding& f) { return f.id == id; });
    if (it == findings.end()) throw std::runtime_error("no finding " + id);
    return *it;
}

}  // namespace inferbench::findings::testing
