// A results store as `inferbench merge` leaves one: the runs of four hosts with four GPU models (the seed's RTX 2080,
// T4, A100 and V100 table), each with its own environment (host, GPU, driver) and GPU power samples, written through
// the store's own API. One cell of the T4 host ran under another duration, one of the V100 host has no power
// samples, and the A100 host ran a second time, on both of its GPUs at once (`parallel: per_device`).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "store/results_store.hpp"

namespace inferbench::testing {

struct FleetHost {
    const char* host;
    const char* gpu;
    const char* driver;
    double watts;
    double ms_per_batch_1;  // mean latency at batch 1; batch 8 takes 4 times as long
};

inline constexpr FleetHost kSeedHosts[] = {
    {"ws-2080", "NVIDIA GeForce RTX 2080", "535.104.05", 215.0, 2.4},
    {"gcp-t4", "Tesla T4", "535.104.05", 70.0, 3.1},
    {"dgx-a100", "NVIDIA A100-SXM4-40GB", "550.54.15", 300.0, 0.9},
    {"p3-v100", "Tesla V100-SXM2-16GB", "470.182.03", 250.0, 1.5},
};
inline constexpr const char* kFleetBackendVersion = "1.17.1";
inline constexpr std::int64_t kFleetDurationNs = 10'000'000'000;
inline constexpr std::int64_t kT4Batch8DurationNs = 2'000'000'000;  // the T4 host's batch 8 cell: another duration

inline std::string fleet_environment(const FleetHost& host, int gpus) {
    nlohmann::json devices = nlohmann::json::array();
    for (int i = 0; i < gpus; ++i)
        devices.push_back({{"index", i}, {"name", host.gpu}, {"driver_version", host.driver}});
    return nlohmann::json{
        {"host", host.host}, {"cpu_model", "Intel Xeon"}, {"gpus", {{"source", "nvml"}, {"devices", devices}}}}
        .dump();
}

// 400 iterations of about `ms` each from t0, and power samples over them on GPU `index` (none where watts is 0).
inline store::BenchmarkRecord fleet_record(std::int64_t run_id, std::int64_t ordinal, const std::string& device,
                                           std::int64_t batch, std::int64_t duration_ns) {
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.ordinal = ordinal;
    b.model = "resnet50";
    b.backend = "onnxruntime";
    b.backend_version = kFleetBackendVersion;
    b.device = device;
    b.precision = "fp16";
    b.batch_size = batch;
    b.status = BenchmarkStatus::ok;
    b.started_unix_ms = 1'760'000'000'000 + run_id * 60'000;
    b.ended_unix_ms = b.started_unix_ms + 1'000;
    b.settings_json = nlohmann::json{{"duration_ns", duration_ns}, {"warmup_ns", 1'000'000'000}}.dump();
    return b;
}

inline void add_fleet_benchmark(store::ResultsStore& results, const store::BenchmarkRecord& b, double ms, double watts,
                                int gpu_index) {
    constexpr std::int64_t kT0 = 5'000'000'000;
    std::vector<IterationRecord> iterations;
    std::int64_t t = kT0;
    const auto mean_ns = static_cast<std::int64_t>(ms * 1e6);
    for (int i = 0; i < 400; ++i) {
        IterationRecord it;
        it.start_ns = t;
        it.e2e_ns = mean_ns + (i % 11 - 5) * 1'000;
        iterations.push_back(it);
        t += it.e2e_ns;
    }
    std::vector<GpuSample> samples;
    for (std::int64_t s = kT0; watts > 0 && s <= t; s += 10'000'000) {
        GpuSample sample;
        sample.t_ns = s;
        sample.gpu_index = gpu_index;
        sample.power_w = watts;
        samples.push_back(sample);
    }
    results.add_benchmark(b, store::BenchmarkData{.iterations = iterations, .gpu_samples = samples});
}

// The merged store: runs 1-4 one per host of kSeedHosts (batch 1 and 8 on cuda:0), then run 5 on the A100 host
// with both of its GPUs at once (cuda:0 and cuda:1, batch 1 and 8 each, each cell marked concurrent).
inline void write_fleet_store(const std::filesystem::path& db) {
    auto results = store::ResultsStore::open(db);
    for (const auto& host : kSeedHosts) {
        store::RunRecord run;
        run.name = std::string("seed on ") + host.host;
        run.started_unix_ms = 1'760'000'000'000;
        run.plan_json = "{}";
        run.host = host.host;
        run.environment_json = fleet_environment(host, 1);
        const auto id = results.begin_run(run);
        const bool t4 = std::string(host.host) == "gcp-t4";
        const bool v100 = std::string(host.host) == "p3-v100";
        add_fleet_benchmark(results, fleet_record(id, 0, "cuda:0", 1, kFleetDurationNs), host.ms_per_batch_1,
                            host.watts, 0);
        add_fleet_benchmark(results, fleet_record(id, 1, "cuda:0", 8, t4 ? kT4Batch8DurationNs : kFleetDurationNs),
                            4 * host.ms_per_batch_1, v100 ? 0.0 : host.watts, 0);
        results.end_run(id, run.started_unix_ms + 10'000, RunStatus::completed);
    }
    const auto& a100 = kSeedHosts[2];
    store::RunRecord run;
    run.name = "per_device on dgx-a100";
    run.started_unix_ms = 1'760'000'100'000;
    run.plan_json = "{}";
    run.host = a100.host;
    run.environment_json = fleet_environment(a100, 2);
    const auto id = results.begin_run(run);
    std::int64_t ordinal = 0;
    for (int gpu = 0; gpu < 2; ++gpu)
        for (const std::int64_t batch : {1, 8}) {
            auto b = fleet_record(id, ordinal++, "cuda:" + std::to_string(gpu), batch, kFleetDurationNs);
            b.concurrent = {{.ordinal = 0, .repeat = 0, .device = gpu == 0 ? "cuda:1" : "cuda:0"}};
            add_fleet_benchmark(results, b, static_cast<double>(batch == 1 ? 1 : 4) * a100.ms_per_batch_1 * 1.02,
                                a100.watts, gpu);
        }
    results.end_run(id, run.started_unix_ms + 10'000, RunStatus::completed);
}

}  // namespace inferbench::testing
