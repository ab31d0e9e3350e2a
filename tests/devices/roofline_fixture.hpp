// A results database with runs on an H200, a CPU and a GPU the run did not record, benchmarks with and
// without model-cost metrics, and stored probes: the numbers are chosen so placements are hand-checkable.
#pragma once

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "analysis/roofline_placement.hpp"
#include "common/scratch_dir.hpp"
#include "core/metrics/model_metrics.hpp"
#include "devices/catalog.hpp"
#include "report/report_data.hpp"
#include "store/results_store.hpp"

namespace inferbench::devices::testing_fixture {

inline constexpr const char* kH200Environment =
    R"({"cpu_model": "Test CPU 9000", "gpus": {"source": "nvml", "devices": [)"
    R"({"index": 0, "name": "NVIDIA H200", "uuid": "GPU-1", "pci_device_id": "0x233510DE"}]}})";

class RooflineDb : public ::testing::Test {
protected:
    void SetUp() override {
        catalog_ = parse_catalog(builtin_catalog_text(), "built-in");
        store_.emplace(store::ResultsStore::open(scratch_.path() / "r.db"));
    }

    std::int64_t run(const std::string& environment_json) {
        store::RunRecord r;
        r.name = "t";
        r.started_unix_ms = ++clock_;
        r.plan_json = "{}";
        r.environment_json = environment_json;
        r.host = "h";
        r.git_commit = "x";
        r.inferbench_version = "0";
        return store_->begin_run(r);
    }

    // A benchmark of model "net" on torch, run `run_id`, measured for `wall_ns`.
    store::BenchmarkRecord record(std::int64_t run_id, const std::string& device, const std::string& precision,
                                  std::int64_t batch, std::int64_t wall_ns = 1'000'000'000) {
        store::BenchmarkRecord b;
        b.run_id = run_id;
        b.ordinal = ++ordinal_;
        b.model = "net";
        b.backend = "torch";
        b.backend_version = "2";
        b.device = device;
        b.precision = precision;
        b.batch_size = batch;
        b.status = BenchmarkStatus::ok;
        b.settings_json = "{}";
        b.measured_wall_ns = wall_ns;
        return b;
    }

    // `count` iterations 10 ms apart.
    static std::vector<IterationRecord> iterations(int count) {
        std::vector<IterationRecord> its;
        for (int i = 0; i < count; ++i) its.push_back({i * 10'000'000LL, 9'000'000});
        return its;
    }

    // `iterations` iterations of a batch in wall_ns: throughput = batch x iterations / wall.
    std::int64_t benchmark(std::int64_t run_id, const std::string& device, const std::string& precision,
                           std::int64_t batch, std::optional<double> flops, std::optional<double> bytes,
                           BenchmarkStatus status = BenchmarkStatus::ok, int count = 100, std::int64_t wall_ns = 1'000'000'000,
                           std::vector<store::Metric> extra = {}) {
        store::BenchmarkRecord b = record(run_id, device, precision, batch, wall_ns);
        b.status = status;
        const auto its = iterations(count);
        std::vector<store::Metric> metrics = std::move(extra);
        if (flops) metrics.push_back({std::string(model_metrics::kFlopsPerInference), *flops, "FLOP"});
        if (bytes) metrics.push_back({std::string(model_metrics::kBytesPerInference), *bytes, "B"});
        return store_->add_benchmark(b, store::BenchmarkData{.iterations = its, .metrics = metrics});
    }

    void probe(const std::string& key, const std::string& name, double value, const std::string& unit,
               std::int64_t at_ms = 1000) {
        store_->add_probe({0, key, "NVIDIA H200", "GPU-1", at_ms, name, value, unit, "", "{}"});
    }

    testing::ScratchDir scratch_;
    // The stored benchmarks placed as a report places them: summarized once (report::load_selection),
    // then analysis::roofline_points over the summaries.
    analysis::RooflineSet placed(const analysis::RooflineOptions& options = {}) const {
        const auto summaries = report::load_selection(*store_, store_->benchmarks()).summaries();
        return analysis::roofline_points(*store_, summaries, catalog_, options);
    }

    Catalog catalog_;
    std::optional<store::ResultsStore> store_;
    std::int64_t clock_ = 0;
    std::int64_t ordinal_ = 0;
};

}  // namespace inferbench::devices::testing_fixture
