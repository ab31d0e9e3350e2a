// Pipeline cells (core/pipeline) written through the store's own API with hand-made stage times, and the
// network-only cell of the same setup: the fixtures of the pipeline summary, its findings, reports and compare.
// Batches run one after another (sequential), each stage right after the one before, so every figure has a known
// answer: e2e = the stages' spans summed + `gap_us` before infer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/pipeline.hpp"
#include "store/results_store.hpp"

namespace inferbench::testing {

// One stage's span and CPU time (its threads' summed) per batch, in microseconds; cpu_us < 0: not measured.
struct StagePlan {
    PipelineStage stage = PipelineStage::decode;
    std::int64_t span_us = 0;
    std::int64_t cpu_us = -1;
    StagePlace place = StagePlace::cpu;
};

struct PipelineCell {
    std::string model = "resnet50";
    std::string backend = "onnxruntime";
    std::string device = "cpu";
    std::string precision = "fp32";
    std::int64_t batch = 8;
    std::int64_t batches = 20;
    std::int64_t threads = 2;
    std::string preprocess = "cpu", postprocess = "cpu", mode = "sequential";
    std::int64_t gap_us = 0;  // between normalize and infer: the hand-off
    std::vector<StagePlan> stages;
};

// A classifier on the CPU whose network is a small part: decode 4 ms of spans with 7 ms of CPU on 2 threads,
// resize 1 ms, normalize 0.5 ms, infer 1.5 ms, postprocess 0.1 ms per batch of 8.
inline PipelineCell decode_bound_cell() {
    PipelineCell c;
    c.stages = {{PipelineStage::read, 100, 100},      {PipelineStage::decode, 4000, 7000},
                {PipelineStage::resize, 1000, 1000},  {PipelineStage::normalize, 500, 500},
                {PipelineStage::infer, 1500, 1500},   {PipelineStage::postprocess, 100, 100}};
    return c;
}

inline std::vector<IterationRecord> pipeline_iterations(const PipelineCell& c, std::int64_t t0_ns = 1'000'000'000) {
    std::int64_t e2e_us = c.gap_us;
    for (const auto& s : c.stages) e2e_us += s.span_us;
    std::vector<IterationRecord> out;
    for (std::int64_t i = 0; i < c.batches; ++i) out.push_back({t0_ns + i * e2e_us * 1000, e2e_us * 1000});
    return out;
}

inline std::vector<PipelineStageTime> pipeline_stage_times(const PipelineCell& c,
                                                           std::int64_t t0_ns = 1'000'000'000) {
    const auto iterations = pipeline_iterations(c, t0_ns);
    std::vector<PipelineStageTime> out;
    for (std::int64_t i = 0; i < c.batches; ++i) {
        std::int64_t t = iterations[static_cast<std::size_t>(i)].start_ns;
        for (const auto& s : c.stages) {
            if (s.stage == PipelineStage::infer) t += c.gap_us * 1000;
            out.push_back({i, s.stage, s.place, t, t + s.span_us * 1000, s.cpu_us < 0 ? kStageNotMeasured : s.cpu_us * 1000,
                           c.batch});
            t += s.span_us * 1000;
        }
    }
    return out;
}

// The network-only cell of the same setup: its iterations the infer span alone.
inline std::vector<IterationRecord> network_iterations(const PipelineCell& c) {
    std::int64_t infer_us = 0;
    for (const auto& s : c.stages)
        if (s.stage == PipelineStage::infer) infer_us = s.span_us;
    std::vector<IterationRecord> out;
    for (std::int64_t i = 0; i < c.batches; ++i) out.push_back({1'000'000'000 + i * infer_us * 1000, infer_us * 1000});
    return out;
}

// The cell's row as a pipeline cell stores it; no stages: the network-only cell of the same setup.
inline store::BenchmarkRecord pipeline_record(const PipelineCell& c, std::int64_t run_id, std::int64_t ordinal,
                                              bool with_pipeline = true) {
    store::BenchmarkRecord b;
    b.run_id = run_id;
    b.ordinal = ordinal;
    b.model = c.model;
    b.backend = c.backend;
    b.backend_version = "1.20.0";
    b.device = c.device;
    b.precision = c.precision;
    b.batch_size = c.batch;
    b.status = BenchmarkStatus::ok;
    b.started_unix_ms = 1'760'000'000'000 + ordinal * 1000;
    b.ended_unix_ms = b.started_unix_ms + 500;
    nlohmann::json settings{{"duration_ns", 1'000'000'000}, {"warmup_ns", 100'000'000}};
    if (with_pipeline) {
        settings["pipeline"] = {{"images", "synthetic"},           {"threads", std::to_string(c.threads)},
                                {"preprocess", c.preprocess},      {"postprocess", c.postprocess},
                                {"mode", c.mode}};
        b.pipeline_stages = pipeline_stage_times(c);
    }
    b.settings_json = settings.dump();
    const auto iterations = with_pipeline ? pipeline_iterations(c) : network_iterations(c);
    b.measured_wall_ns = iterations.back().start_ns + iterations.back().e2e_ns - iterations.front().start_ns;
    return b;
}

inline std::int64_t add_run(store::ResultsStore& results, const std::string& name = "pipelines") {
    store::RunRecord run;
    run.name = name;
    run.status = RunStatus::completed;
    run.environment_json = R"({"host": "ci", "cpu_model": "Intel Xeon"})";
    return results.begin_run(run);
}

// Stores the pipeline cell (and, where asked, its network-only twin); the pipeline cell's id.
inline std::int64_t add_pipeline_cell(store::ResultsStore& results, std::int64_t run_id, const PipelineCell& c,
                                      std::int64_t ordinal, bool with_network_only = false) {
    const auto iterations = pipeline_iterations(c);
    const std::int64_t id = results.add_benchmark(pipeline_record(c, run_id, ordinal), iterations);
    if (with_network_only)
        results.add_benchmark(pipeline_record(c, run_id, ordinal + 100, false), network_iterations(c));
    return id;
}

}  // namespace inferbench::testing
