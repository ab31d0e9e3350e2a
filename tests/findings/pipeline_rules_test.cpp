// The pipeline rules on cells written through the store (tests/common/pipeline_store), read back as `explain`
// reads them: each rule where it fires and where it stays silent.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "common/pipeline_store.hpp"
#include "core/temp_dir.hpp"
#include "devices/catalog.hpp"
#include "findings/evidence.hpp"
#include "findings/findings.hpp"
#include "findings/rules.hpp"

namespace inferbench::findings {
namespace {

using inferbench::testing::PipelineCell;
using inferbench::testing::StagePlan;

// The evidence of `cells`, each stored in one run and read back.
std::vector<BenchmarkEvidence> stored_evidence(const std::vector<PipelineCell>& cells) {
    const TempDir dir("pipeline-rules");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto run = inferbench::testing::add_run(results);
    for (std::size_t i = 0; i < cells.size(); ++i)
        inferbench::testing::add_pipeline_cell(results, run, cells[i], static_cast<std::int64_t>(i));
    return load_evidence(results, results.benchmarks(run), devices::load_catalog());
}

const Finding* find(const std::vector<Finding>& found, const std::string& id) {
    const auto it = std::find_if(found.begin(), found.end(), [&](const Finding& f) { return f.id == id; });
    return it == found.end() ? nullptr : &*it;
}

// On a GPU: decode on the CPU takes most of each batch, the network 1.5 of 7.2 ms.
PipelineCell gpu_cell_decoding_on_cpu() {
    PipelineCell c = inferbench::testing::decode_bound_cell();
    c.device = "cuda:0";
    c.precision = "fp16";
    for (auto& s : c.stages)
        if (s.stage == PipelineStage::infer) {
            s.place = StagePlace::gpu;
            s.cpu_us = -1;
        }
    return c;
}

TEST(PipelineRules, TheNetworksSmallShareNamesTheBoundAndTheGpusIdleTime) {
    const auto evidence = stored_evidence({gpu_cell_decoding_on_cpu()});
    ASSERT_EQ(evidence.size(), 1U);
    const auto found = explain(evidence);
    const auto* f = find(found, "pipeline.network_share");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->severity, Severity::warning);
    // 1.5 of 7.2 ms: 21%; decode's 7 ms of CPU per 8 images on 2 threads: 2286 images/s; infer open 1.5 of 7.2 ms.
    EXPECT_NE(f->statement.find("the network is 21% of end-to-end time"), std::string::npos) << f->statement;
    EXPECT_NE(f->statement.find("decode on 2 threads bounds throughput at 2286 images/s"), std::string::npos)
        << f->statement;
    EXPECT_NE(f->statement.find("measured 1111 images/s"), std::string::npos) << f->statement;
    EXPECT_NE(f->statement.find("the GPU idles 79% of the run"), std::string::npos) << f->statement;
    EXPECT_NE(std::find(f->evidence.series.begin(), f->evidence.series.end(), "pipeline_stages.cpu_ns"),
              f->evidence.series.end());
    ASSERT_TRUE(f->evidence.window);
    EXPECT_EQ(f->evidence.window->end_ns, 20 * 7'200'000);
}

TEST(PipelineRules, TheNetworkShareSaysWhenTheBoundIsUnknown) {
    PipelineCell c = inferbench::testing::decode_bound_cell();
    for (auto& s : c.stages) s.cpu_us = -1;
    const auto found = explain(stored_evidence({c}));
    const auto* f = find(found, "pipeline.network_share");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->statement.find("decode takes the most (56%); the CPU stages' bound is unknown: the CPU stages' CPU "
                                "time is not measured"),
              std::string::npos)
        << f->statement;
    EXPECT_EQ(f->statement.find("GPU idles"), std::string::npos);  // a CPU cell
}

TEST(PipelineRules, SilentWhereTheNetworkIsMostOfTheTime) {
    PipelineCell c = inferbench::testing::decode_bound_cell();
    c.stages = {{PipelineStage::decode, 1000, 1500}, {PipelineStage::infer, 9000, 9000}};
    const auto found = explain(stored_evidence({c}));
    EXPECT_EQ(find(found, "pipeline.network_share"), nullptr);
    EXPECT_EQ(find(found, "pipeline.postprocess_over_inference"), nullptr);
}

TEST(PipelineRules, SilentWhereOverlappedBatchesKeepTheNetworkBusy) {
    // Overlapped, as measured for mobilenet b8 on 2 busy cores: each batch waits in the queues (its e2e 4 times its
    // stages), so infer is a quarter of e2e, yet some batch is in the network 90% of the run: the network bounds it.
    const TempDir dir("pipeline-rules");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto run = inferbench::testing::add_run(results);
    PipelineCell c = inferbench::testing::decode_bound_cell();
    c.stages = {{PipelineStage::decode, 10'000, 15'000}, {PipelineStage::infer, 100'000, -1}};
    auto record = inferbench::testing::pipeline_record(c, run, 0);
    std::vector<IterationRecord> iterations;
    for (auto& s : record.pipeline_stages) {
        const std::int64_t start = 1'000'000'000 + s.iteration * 110'000'000;  // a batch ends every 110 ms
        s.start_ns = s.stage == PipelineStage::decode ? start - 330'000'000 : start;
        s.end_ns = s.stage == PipelineStage::decode ? start - 320'000'000 : start + 100'000'000;
        if (s.stage == PipelineStage::infer) iterations.push_back({start - 330'000'000, 430'000'000});
    }
    results.add_benchmark(record, iterations);
    const auto evidence = load_evidence(results, results.benchmarks(run), devices::load_catalog());
    ASSERT_TRUE(evidence[0].summary.pipeline);
    EXPECT_LT(*evidence[0].summary.pipeline->network_share_pct, 50.0);
    EXPECT_EQ(find(explain(evidence), "pipeline.network_share"), nullptr);
}

// YOLOv3 at batch 32 on a GPU: NMS on the CPU 12 ms, inference 8 ms.
PipelineCell detector(std::int64_t nms_us) {
    PipelineCell c;
    c.model = "yolov3";
    c.device = "cuda:0";
    c.precision = "fp16";
    c.batch = 32;
    c.stages = {{PipelineStage::decode, 3000, 5000},
                {PipelineStage::infer, 8000, -1, StagePlace::gpu},
                {PipelineStage::postprocess, 500, 500},
                {PipelineStage::nms, nms_us, nms_us}};
    return c;
}

TEST(PipelineRules, NmsOnTheCpuCostingMoreThanInference) {
    const auto found = explain(stored_evidence({detector(12'000)}));
    const auto* f = find(found, "pipeline.nms_over_inference");
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->statement.find("NMS on the CPU costs more than yolov3's inference at batch 32: 12.00 ms against 8.00 ms "
                                "per batch (1.5x)"),
              std::string::npos)
        << f->statement;
    EXPECT_EQ(find(found, "pipeline.postprocess_over_inference"), nullptr);  // 0.5 ms
}

TEST(PipelineRules, NmsSilentWhereCheaperThanInferenceOrOnTheGpu) {
    EXPECT_EQ(find(explain(stored_evidence({detector(4'000)})), "pipeline.nms_over_inference"), nullptr);
    PipelineCell on_gpu = detector(12'000);
    on_gpu.postprocess = "gpu";
    on_gpu.stages.back().place = StagePlace::gpu;
    on_gpu.stages.back().cpu_us = -1;
    EXPECT_EQ(find(explain(stored_evidence({on_gpu})), "pipeline.nms_over_inference"), nullptr);
}

PipelineCell gpu_preprocessing_cell(std::int64_t decode_us) {
    PipelineCell c = gpu_cell_decoding_on_cpu();
    c.preprocess = "gpu";
    for (auto& s : c.stages)
        if (s.stage != PipelineStage::infer && s.stage != PipelineStage::postprocess) {
            s.place = StagePlace::gpu;
            s.cpu_us = -1;
            if (s.stage == PipelineStage::decode) s.span_us = decode_us;
        }
    return c;
}

TEST(PipelineRules, GpuDecodeWouldRemoveTheBoundWhereTheGpuPathWasMeasured) {
    const auto found = explain(stored_evidence({gpu_cell_decoding_on_cpu(), gpu_preprocessing_cell(200)}));
    const auto* f = find(found, "pipeline.gpu_preprocess");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->benchmarks.size(), 2U);
    // The GPU cell's batch: 0.1 + 0.2 + 1 + 0.5 + 1.5 + 0.1 = 3.4 ms for 8 images: 2353 images/s.
    EXPECT_NE(f->statement.find("ran at 2353 images/s, above the 2286 images/s that decode on 2 threads allows on the "
                                "CPU"),
              std::string::npos)
        << f->statement;
}

TEST(PipelineRules, GpuDecodeSilentWithoutAGpuCellOrWhereItWasNotFaster) {
    EXPECT_EQ(find(explain(stored_evidence({gpu_cell_decoding_on_cpu()})), "pipeline.gpu_preprocess"), nullptr);
    // A GPU decode of 3 ms: 6.2 ms a batch, 1290 images/s, below the CPU bound.
    const auto found = explain(stored_evidence({gpu_cell_decoding_on_cpu(), gpu_preprocessing_cell(3000)}));
    EXPECT_EQ(find(found, "pipeline.gpu_preprocess"), nullptr);
    // Another batch size is another setup.
    PipelineCell other = gpu_preprocessing_cell(200);
    other.batch = 16;
    EXPECT_EQ(find(explain(stored_evidence({gpu_cell_decoding_on_cpu(), other})), "pipeline.gpu_preprocess"), nullptr);
}

TEST(PipelineRules, APipelineCellIsNoAlternativeToItsNetworkOnlyCell) {
    const TempDir dir("pipeline-rules");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto run = inferbench::testing::add_run(results);
    inferbench::testing::add_pipeline_cell(results, run, inferbench::testing::decode_bound_cell(), 0, true);
    const auto found = explain(load_evidence(results, results.benchmarks(run), devices::load_catalog()));
    EXPECT_NE(find(found, "pipeline.network_share"), nullptr);
    EXPECT_EQ(find(found, "compare.winners"), nullptr);  // the network alone is not "faster" than the pipeline
}

TEST(PipelineRules, ANetworkOnlyCellHasNoPipelineFindings) {
    const TempDir dir("pipeline-rules");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto run = inferbench::testing::add_run(results);
    const auto c = inferbench::testing::decode_bound_cell();
    results.add_benchmark(inferbench::testing::pipeline_record(c, run, 0, false),
                          inferbench::testing::network_iterations(c));
    const auto found = explain(load_evidence(results, results.benchmarks(run), devices::load_catalog()));
    for (const auto& f : found) EXPECT_NE(f.id.rfind("pipeline.", 0), 0U) << f.id;
}

}  // namespace
}  // namespace inferbench::findings
