#include "analysis/pipeline_summary.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "common/pipeline_store.hpp"
#include "core/error.hpp"
#include "core/temp_dir.hpp"

namespace inferbench::analysis {
namespace {

constexpr std::int64_t kMs = 1'000'000;

PipelineStageTime stage_time(std::int64_t iteration, PipelineStage stage, std::int64_t start_ms, std::int64_t end_ms,
                             std::int64_t cpu_ms, std::int64_t images = 8, StagePlace place = StagePlace::cpu) {
    return {iteration, stage, place, start_ms * kMs, end_ms * kMs, cpu_ms < 0 ? kStageNotMeasured : cpu_ms * kMs,
            images};
}

IterationRecord iteration(std::int64_t start_ms, std::int64_t e2e_ms) {
    IterationRecord r;
    r.start_ns = start_ms * kMs;
    r.e2e_ns = e2e_ms * kMs;
    return r;
}

// Two sequential batches of 8 images, 100 ms each, back to back; every stage's span and CPU time known:
//   decode 0..40 (CPU 60: 2 threads at 75%), resize 40..50 (CPU 10), normalize 50..55 (CPU 5),
//   infer 60..90 (a gap of 5 ms before it: between stages), postprocess 90..100 (CPU 10).
std::vector<PipelineStageTime> two_batches() {
    std::vector<PipelineStageTime> stages;
    for (std::int64_t i = 0; i < 2; ++i) {
        const std::int64_t t = i * 100;
        stages.push_back(stage_time(i, PipelineStage::decode, t, t + 40, 60));
        stages.push_back(stage_time(i, PipelineStage::resize, t + 40, t + 50, 10));
        stages.push_back(stage_time(i, PipelineStage::normalize, t + 50, t + 55, 5));
        stages.push_back(stage_time(i, PipelineStage::infer, t + 60, t + 90, 30));
        stages.push_back(stage_time(i, PipelineStage::postprocess, t + 90, t + 100, 10));
    }
    return stages;
}

const std::vector<IterationRecord> kTwoIterations = {iteration(0, 100), iteration(100, 100)};

TEST(PipelineSummary, KnownAnswersOfTwoSequentialBatches) {
    const auto stages = two_batches();
    const auto s = pipeline_summary(kTwoIterations, stages, {.gpu_device = false, .threads = 2, .mode = {}});
    EXPECT_EQ(s.batches, 2);
    EXPECT_EQ(s.images, 16);
    EXPECT_EQ(s.window_ns(), 200 * kMs);
    EXPECT_DOUBLE_EQ(s.images_per_s, 80.0);  // 16 images in 0.2 s
    EXPECT_DOUBLE_EQ(s.e2e.mean, 100.0 * kMs);
    ASSERT_EQ(s.stages.size(), 5U);
    EXPECT_EQ(s.stages[0].stage, PipelineStage::decode);
    EXPECT_DOUBLE_EQ(s.stages[0].mean_ns, 40.0 * kMs);
    EXPECT_DOUBLE_EQ(s.stages[0].share_pct, 40.0);
    EXPECT_DOUBLE_EQ(*s.stages[0].cpu_ns_per_image, 7.5 * kMs);       // 120 ms over 16 images
    EXPECT_DOUBLE_EQ(*s.stages[0].cores, 0.6);                         // 120 ms of CPU in 200 ms
    EXPECT_DOUBLE_EQ(*s.stages[0].cores_while_running, 1.5);           // 120 ms of CPU in 80 ms of spans
    EXPECT_NEAR(*s.stages[0].bound_images_per_s, 2e9 / (7.5 * kMs), 1e-9);  // 266.7 images/s on 2 threads
    EXPECT_NEAR(*s.stages[1].bound_images_per_s, 2e9 / (1.25 * kMs), 1e-9);
    ASSERT_TRUE(s.bounding_stage);
    EXPECT_EQ(s.stages[*s.bounding_stage].stage, PipelineStage::decode);
    EXPECT_DOUBLE_EQ(*s.network_share_pct, 30.0);
    EXPECT_DOUBLE_EQ(s.between_stages_pct, 5.0);  // 55..60 of each batch
    const auto* infer = s.stage(PipelineStage::infer);
    ASSERT_NE(infer, nullptr);
    EXPECT_FALSE(infer->cpu_ns_per_image);  // the calling thread's CPU time is not the backend's
    EXPECT_FALSE(infer->bound_images_per_s);
    EXPECT_FALSE(s.gpu_idle_pct);  // a CPU cell
    EXPECT_EQ(s.preprocess_place(), StagePlace::cpu);
    EXPECT_FALSE(s.images_lower_bound);
    EXPECT_TRUE(s.notes.empty()) << s.notes.front();
}

TEST(PipelineSummary, GpuIdleIsTheTimeNoInferSpanWasOpen) {
    // Overlapped: three batches whose infer spans are 10..40, 30..60 and 80..90 in a 0..100 window: busy 50 + 10.
    std::vector<PipelineStageTime> stages = {
        stage_time(0, PipelineStage::decode, 0, 10, -1, 8, StagePlace::gpu),
        stage_time(0, PipelineStage::infer, 10, 40, -1, 8, StagePlace::gpu),
        stage_time(1, PipelineStage::decode, 5, 30, -1, 8, StagePlace::gpu),
        stage_time(1, PipelineStage::infer, 30, 60, -1, 8, StagePlace::gpu),
        stage_time(2, PipelineStage::decode, 40, 80, -1, 8, StagePlace::gpu),
        stage_time(2, PipelineStage::infer, 80, 90, -1, 8, StagePlace::gpu),
    };
    const std::vector<IterationRecord> its = {iteration(0, 40), iteration(5, 55), iteration(40, 60)};
    const auto s = pipeline_summary(its, stages, {.gpu_device = true, .threads = 2, .mode = PipelineMode::overlapped});
    ASSERT_TRUE(s.gpu_idle_pct);
    EXPECT_DOUBLE_EQ(*s.gpu_idle_pct, 40.0);
    EXPECT_EQ(s.preprocess_place(), StagePlace::gpu);
    EXPECT_FALSE(s.bounding_stage);  // no CPU stage
    EXPECT_DOUBLE_EQ(s.images_per_s, 24 * 1e9 / (100.0 * kMs));
}

TEST(PipelineSummary, GpuPreprocessingIsToldByItsDecodeNotByTheHostsRead) {
    // As the worker stores a GPU-preprocessed batch: its files read from host memory on the CPU, decode and the
    // fused resize + normalise on the GPU.
    const std::vector<PipelineStageTime> stages = {
        stage_time(0, PipelineStage::read, 0, 1, 1),
        stage_time(0, PipelineStage::decode, 1, 3, -1, 8, StagePlace::gpu),
        stage_time(0, PipelineStage::resize, 3, 4, -1, 8, StagePlace::gpu),
        stage_time(0, PipelineStage::infer, 4, 9, -1, 8, StagePlace::gpu),
        stage_time(0, PipelineStage::postprocess, 9, 10, 1),
    };
    const std::vector<IterationRecord> its = {iteration(0, 10)};
    const auto s = pipeline_summary(its, stages, {.gpu_device = true, .threads = 2, .mode = PipelineMode::sequential});
    EXPECT_EQ(s.preprocess_place(), StagePlace::gpu);
    EXPECT_EQ(s.postprocess_place(), StagePlace::cpu);
}

TEST(PipelineSummary, ABatchOfOneImageKeepsOneThreadBusyWhateverThePool) {
    // Batch 1 on a pool of 8: decode's 2 ms of CPU per image allow 500 images/s, not 8 x 500.
    const std::vector<PipelineStageTime> stages = {stage_time(0, PipelineStage::decode, 0, 2, 2, 1),
                                                   stage_time(0, PipelineStage::infer, 2, 3, -1, 1),
                                                   stage_time(1, PipelineStage::decode, 3, 5, 2, 1),
                                                   stage_time(1, PipelineStage::infer, 5, 6, -1, 1)};
    const std::vector<IterationRecord> its = {iteration(0, 3), iteration(3, 3)};
    const auto s = pipeline_summary(its, stages, {.gpu_device = false, .threads = 8, .mode = PipelineMode::sequential});
    const StageFigures* decode = s.stage(PipelineStage::decode);
    ASSERT_TRUE(decode && decode->bound_images_per_s);
    EXPECT_DOUBLE_EQ(*decode->bound_images_per_s, 500.0);
}

TEST(PipelineSummary, PostProcessingAndNmsAreBoundOnTheOneThreadThatRunsThem) {
    // Batches of 8 on a pool of 4: decode's 8 ms of CPU (1 ms an image) allow 4000 images/s; NMS's 8 ms on its one
    // thread allow 1000.
    const std::vector<PipelineStageTime> stages = {stage_time(0, PipelineStage::decode, 0, 2, 8),
                                                   stage_time(0, PipelineStage::infer, 2, 3, -1),
                                                   stage_time(0, PipelineStage::nms, 3, 11, 8)};
    const std::vector<IterationRecord> its = {iteration(0, 11)};
    const auto s = pipeline_summary(its, stages, {.gpu_device = false, .threads = 4, .mode = PipelineMode::sequential});
    const StageFigures* decode = s.stage(PipelineStage::decode);
    const StageFigures* nms = s.stage(PipelineStage::nms);
    ASSERT_TRUE(decode && decode->bound_images_per_s && nms && nms->bound_images_per_s);
    EXPECT_DOUBLE_EQ(*decode->bound_images_per_s, 4000.0);
    EXPECT_EQ(decode->workers, 4);
    EXPECT_DOUBLE_EQ(*nms->bound_images_per_s, 1000.0);
    EXPECT_EQ(nms->workers, 1);
    ASSERT_TRUE(s.bounding_stage);
    EXPECT_EQ(s.stages[*s.bounding_stage].stage, PipelineStage::nms);
}

TEST(PipelineSummary, UnknownsAreSaidSo) {
    auto stages = two_batches();
    for (auto& st : stages)
        if (st.stage == PipelineStage::decode) st.cpu_ns = kStageNotMeasured;
    const auto s = pipeline_summary(kTwoIterations, stages, {});
    const auto* decode = s.stage(PipelineStage::decode);
    EXPECT_FALSE(decode->cpu_ns_per_image);
    EXPECT_FALSE(decode->cores);
    const auto* resize = s.stage(PipelineStage::resize);
    EXPECT_TRUE(resize->cores);
    EXPECT_FALSE(resize->bound_images_per_s);  // no thread count
    EXPECT_FALSE(s.bounding_stage);
    const auto has = [&](const std::string& text) {
        return std::any_of(s.notes.begin(), s.notes.end(), [&](const auto& n) { return n.find(text) != std::string::npos; });
    };
    EXPECT_TRUE(has("decode: CPU time not measured"));
    EXPECT_TRUE(has("thread count is not stored"));
}

TEST(PipelineSummary, PartlyMeasuredCpuAndBatchesWithoutStages) {
    auto stages = two_batches();
    stages[0].cpu_ns = kStageNotMeasured;  // batch 0's decode
    std::vector<IterationRecord> its = kTwoIterations;
    its.push_back(iteration(200, 100));  // a third batch with no stages stored
    const auto s = pipeline_summary(its, stages, {.gpu_device = false, .threads = 1, .mode = {}});
    const auto* decode = s.stage(PipelineStage::decode);
    EXPECT_DOUBLE_EQ(*decode->cpu_ns_per_image, 7.5 * kMs);  // batch 1's 60 ms over its 8 images
    EXPECT_FALSE(decode->cores);  // not over the whole window: unknown rather than a partial sum
    EXPECT_DOUBLE_EQ(*decode->cores_while_running, 1.5);
    EXPECT_TRUE(s.images_lower_bound);
    EXPECT_EQ(s.images, 16);
    EXPECT_DOUBLE_EQ(s.images_per_s, 16 * 1e9 / (300.0 * kMs));
}

TEST(PipelineSummary, ImagesOutAreTheLastStagesImages) {
    auto stages = two_batches();
    for (auto& st : stages)
        if (st.iteration == 1 && st.stage != PipelineStage::decode) st.images = 6;  // two images failed to decode
    const auto s = pipeline_summary(kTwoIterations, stages, {});
    EXPECT_EQ(s.images, 14);
}

TEST(PipelineSummary, UnionOfSpans) {
    EXPECT_EQ(union_length_ns({}), 0);
    EXPECT_EQ(union_length_ns({{0, 10}, {5, 15}, {20, 30}, {30, 31}, {40, 40}}), 26);
    EXPECT_EQ(union_length_ns({{0, 100}, {10, 20}}), 100);
}

TEST(PipelineSummary, BadInputIsRefused) {
    const auto stages = two_batches();
    EXPECT_THROW(pipeline_summary(kTwoIterations, {}, {}), UserError);
    EXPECT_THROW(pipeline_summary({}, stages, {}), UserError);
    const std::vector<IterationRecord> one = {iteration(0, 100)};
    EXPECT_THROW(pipeline_summary(one, stages, {}), UserError);  // stages of iteration 1, which is not there
    auto backwards = stages;
    backwards[0].end_ns = backwards[0].start_ns - 1;
    EXPECT_THROW(pipeline_summary(kTwoIterations, backwards, {}), UserError);
}

TEST(PipelineSummary, RepeatsCombineAsMeansAndSums) {
    const auto stages = two_batches();
    auto slower = stages;
    for (auto& st : slower)
        if (st.stage == PipelineStage::decode) st.cpu_ns *= 2;  // decode's CPU time twice repeat 0's
    std::vector<BenchmarkSummary> repeats(2);
    for (std::size_t i = 0; i < 2; ++i) {
        repeats[i].benchmark.status = BenchmarkStatus::ok;
        repeats[i].e2e.count = 2;
        repeats[i].e2e.mean = 100.0 * kMs;
        repeats[i].pipeline = pipeline_summary(kTwoIterations, i == 0 ? stages : slower,
                                               {.gpu_device = false, .threads = 2, .mode = {}});
    }
    const auto row = combine_repeats(repeats);
    ASSERT_TRUE(row.pipeline);
    EXPECT_EQ(row.pipeline->images, 32);
    EXPECT_EQ(row.pipeline->batches, 4);
    const auto* decode = row.pipeline->stage(PipelineStage::decode);
    EXPECT_DOUBLE_EQ(*decode->cpu_ns_per_image, 11.25 * kMs);  // the mean of 7.5 and 15 ms
    EXPECT_EQ(decode->images, 32);
    EXPECT_EQ(row.pipeline->window_ns(), 0);  // each repeat had its own
    repeats[1].pipeline.reset();
    EXPECT_FALSE(combine_repeats(repeats).pipeline);
}

}  // namespace
}  // namespace inferbench::analysis

namespace inferbench::analysis {
namespace {

// Through the store: a pipeline cell written with its stages, summarized as `summary` and `report` read it.
TEST(PipelineSummary, AStoredPipelineCellIsSummarizedWithItsStagesAndSettings) {
    const TempDir dir("pipeline-summary");
    auto results = store::ResultsStore::open(dir.path() / "r.db");
    const auto run = testing::add_run(results);
    const auto cell = testing::decode_bound_cell();
    testing::add_pipeline_cell(results, run, cell, 0, true);
    const auto summaries = summarize_run(results, run);
    ASSERT_EQ(summaries.size(), 2U);
    const auto& s = summaries[0];
    ASSERT_TRUE(s.pipeline);
    EXPECT_TRUE(s.benchmark.pipeline_stages.empty());  // not held by every summary
    EXPECT_EQ(s.pipeline->facts.threads, 2);
    EXPECT_EQ(s.pipeline->facts.mode, PipelineMode::sequential);
    EXPECT_EQ(s.pipeline->batches, 20);
    EXPECT_EQ(s.pipeline->images, 160);
    EXPECT_NEAR(s.pipeline->images_per_s, 8 / 7.2e-3, 1e-6);  // 8 images every 7.2 ms
    EXPECT_NEAR(*s.pipeline->network_share_pct, 100 * 1.5 / 7.2, 1e-9);
    ASSERT_TRUE(s.pipeline->bounding_stage);
    const auto& bound = s.pipeline->stages[*s.pipeline->bounding_stage];
    EXPECT_EQ(bound.stage, PipelineStage::decode);
    EXPECT_NEAR(*bound.bound_images_per_s, 2 * 8 / 7e-3, 1e-6);  // 7 ms of CPU for 8 images, on 2 threads
    EXPECT_FALSE(summaries[1].pipeline);  // the network-only cell
}

}  // namespace
}  // namespace inferbench::analysis
