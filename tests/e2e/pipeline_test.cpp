// Image pipeline cells through the real CLI on ONNX Runtime's CPU over images inferbench writes itself: a classifier
// and a detector, sequential and overlapped. Each measured batch is one iteration and its stages are stored in the
// order a batch passes them, inside its iteration's span; bad image folders are counted or fail the cell.
#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "core/metrics/pipeline_metrics.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

// Small images and few batches: the figures are not the point here, the stages' records are.
std::string plan(const std::string& models, const std::string& pipeline, std::int64_t batch = 2) {
    return "models: [" + models + "]\nbackends: [onnxruntime]\nbatch_sizes: [" + std::to_string(batch) +
           "]\nwarmup: 0s\nwarmup_iterations: 1\nduration: 1ms\nmin_iterations: 3\nmax_iterations: 3\n"
           "model_cache: cache\ntelemetry_enabled: false\npipeline:\n  images: synthetic\n  image_count: 3\n"
           "  image_size: 200x150\n  threads: 2\n" + pipeline;
}

struct Stored {
    store::BenchmarkRecord benchmark;
    std::vector<IterationRecord> iterations;
    std::vector<PipelineStageTime> stages;
    std::map<std::string, double> metrics;
};

std::vector<Stored> stored(const ScratchDir& dir) {
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    std::vector<Stored> cells;
    for (auto& b : store.benchmarks()) {
        Stored cell{b, store.iterations(b.benchmark_id), store.pipeline_stages(b.benchmark_id), {}};
        for (const auto& m : store.metrics(b.benchmark_id)) cell.metrics[m.name] = m.value;
        cells.push_back(std::move(cell));
    }
    return cells;
}

// Every batch passed `expected` stages, in that order, each inside its iteration's span, with the batch's images;
// sequential, each stage begins once the one before has ended, but for resize and normalise: each image passes
// decode, resize and normalise on one thread of the pool, so a batch's resize begins when its first image's does.
void expect_consistent(const Stored& cell, const std::vector<PipelineStage>& expected, bool sequential) {
    ASSERT_EQ(cell.benchmark.status, BenchmarkStatus::ok) << cell.benchmark.reason;
    ASSERT_EQ(cell.iterations.size(), 3u);
    ASSERT_EQ(cell.stages.size(), 3 * expected.size());
    for (std::size_t i = 0; i < cell.iterations.size(); ++i) {
        const IterationRecord& it = cell.iterations[i];
        for (std::size_t s = 0; s < expected.size(); ++s) {
            const PipelineStageTime& stage = cell.stages[i * expected.size() + s];
            SCOPED_TRACE("iteration " + std::to_string(i) + " stage " + std::string(to_string(stage.stage)));
            EXPECT_EQ(stage.iteration, static_cast<std::int64_t>(i));
            EXPECT_EQ(stage.stage, expected[s]);
            EXPECT_EQ(stage.place, StagePlace::cpu);
            EXPECT_EQ(stage.images, cell.benchmark.batch_size);
            EXPECT_LE(stage.start_ns, stage.end_ns);
            EXPECT_GE(stage.start_ns, it.start_ns);
            EXPECT_LE(stage.end_ns, it.start_ns + it.e2e_ns);
            if (stage.stage == PipelineStage::infer) {
                EXPECT_EQ(stage.cpu_ns, kStageNotMeasured);
            } else {
                EXPECT_GE(stage.cpu_ns, 0);
            }
            if (s > 0) {
                const PipelineStageTime& before = cell.stages[i * expected.size() + s - 1];
                EXPECT_GE(stage.start_ns, before.start_ns);
                const bool per_image = stage.stage == PipelineStage::resize || stage.stage == PipelineStage::normalize;
                if (sequential && !per_image) {
                    EXPECT_GE(stage.start_ns, before.end_ns);
                }
            }
        }
        EXPECT_EQ(cell.stages[i * expected.size()].start_ns, it.start_ns) << "an iteration starts with its read";
        EXPECT_EQ(cell.stages[(i + 1) * expected.size() - 1].end_ns, it.start_ns + it.e2e_ns);
        EXPECT_EQ(it.queue_ns != kNotMeasured, !sequential) << "queue time is the overlapped pipeline's";
    }
    EXPECT_EQ(cell.metrics.at(std::string(pipeline_metrics::kImages)), 3);
    EXPECT_EQ(cell.metrics.at(std::string(pipeline_metrics::kImagesSkipped)), 0);
}

const std::vector<PipelineStage> kClassifierStages = {PipelineStage::read,      PipelineStage::decode,
                                                      PipelineStage::resize,    PipelineStage::normalize,
                                                      PipelineStage::infer,     PipelineStage::postprocess};

TEST(Pipeline, AClassifierSequentialAndOverlappedStoresEveryBatchsStages) {
#if !INFERBENCH_HAVE_ONNXRUNTIME
    GTEST_SKIP() << "ONNX Runtime is not built";
#endif
    ScratchDir dir;
    dir.write("plan.yaml", plan("mobilenet", "  mode: [sequential, overlapped]\n  queue_depth: 1\n"));
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const auto cells = stored(dir);
    ASSERT_EQ(cells.size(), 2u);
    EXPECT_EQ(cells[0].benchmark.settings_json.find("\"mode\":\"sequential\"") != std::string::npos, true)
        << cells[0].benchmark.settings_json;
    expect_consistent(cells[0], kClassifierStages, true);
    expect_consistent(cells[1], kClassifierStages, false);
    EXPECT_EQ(cells[1].metrics.at(std::string(pipeline_metrics::kQueueDepth)), 1);
}

TEST(Pipeline, Resnet50SequentialRunsEndToEnd) {
#if !INFERBENCH_HAVE_ONNXRUNTIME
    GTEST_SKIP() << "ONNX Runtime is not built";
#endif
    ScratchDir dir;
    dir.write("plan.yaml", plan("resnet50", "  mode: sequential\n", 1));
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const auto cells = stored(dir);
    ASSERT_EQ(cells.size(), 1u);
    expect_consistent(cells[0], kClassifierStages, true);
    const auto summary = dir.run("summary --db r.db");
    EXPECT_NE(summary.out.find("synthetic"), std::string::npos) << "the summary says what was fed: " << summary.out;
    EXPECT_EQ(summary.out.find("random"), std::string::npos) << summary.out;
}

TEST(Pipeline, ADetectorAddsItsNmsStage) {
#if !INFERBENCH_HAVE_ONNXRUNTIME
    GTEST_SKIP() << "ONNX Runtime is not built";
#endif
    ScratchDir dir;
    dir.write("plan.yaml", plan("ssd-mobilenet", "  mode: [sequential, overlapped]\n", 1));
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err << run.out;
    const auto cells = stored(dir);
    ASSERT_EQ(cells.size(), 2u);
    std::vector<PipelineStage> stages = kClassifierStages;
    stages.push_back(PipelineStage::nms);
    expect_consistent(cells[0], stages, true);
    expect_consistent(cells[1], stages, false);
}

TEST(Pipeline, BadFilesAreSkippedAndCountedAndAFolderWithNoImageFailsTheCell) {
#if !INFERBENCH_HAVE_ONNXRUNTIME
    GTEST_SKIP() << "ONNX Runtime is not built";
#endif
    ScratchDir dir;
    // One real JPEG (written by the first run's synthetic images), a truncated copy, a text file, an empty folder.
    dir.write("plan.yaml", plan("mobilenet", "  mode: sequential\n", 1));
    ASSERT_EQ(dir.run("run plan.yaml --db first.db --quiet").exit_code, 0);
    std::filesystem::path jpeg;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.file("cache")))
        if (entry.path().extension() == ".jpg") jpeg = entry.path();
    ASSERT_FALSE(jpeg.empty());
    std::filesystem::create_directories(dir.file("photos"));
    std::filesystem::create_directories(dir.file("empty"));
    std::filesystem::copy_file(jpeg, dir.file("photos/a-good.jpg"));
    const std::string bytes = testing::read_file(jpeg);
    dir.write("photos/b-truncated.jpg", bytes.substr(0, bytes.size() / 3));
    dir.write("photos/c-notes.txt", "not an image\n");
    const auto run = dir.run("run plan.yaml --db r.db --quiet --set pipeline.images=photos");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto failed = dir.run("run plan.yaml --db r.db --quiet --set pipeline.images=empty");
    EXPECT_NE(failed.exit_code, 0);
    EXPECT_NE(failed.exit_code, 2) << "a failed cell, not a refused plan: " << failed.err;
    const auto cells = stored(dir);
    ASSERT_EQ(cells.size(), 2u);
    EXPECT_EQ(cells[0].benchmark.status, BenchmarkStatus::ok) << cells[0].benchmark.reason;
    EXPECT_EQ(cells[0].metrics.at(std::string(pipeline_metrics::kImages)), 1);
    EXPECT_EQ(cells[0].metrics.at(std::string(pipeline_metrics::kImagesSkipped)), 2);
    const std::string& output = cells[0].benchmark.stderr_tail;
    EXPECT_NE(output.find("photos/c-notes.txt: not a JPEG or PNG file"), std::string::npos) << "each skipped file on a line: " << output;
    EXPECT_NE(output.find("image skipped: b-truncated.jpg"), std::string::npos) << output;
    EXPECT_EQ(cells[1].benchmark.status, BenchmarkStatus::failed);
    EXPECT_NE(cells[1].benchmark.reason.find("empty"), std::string::npos) << cells[1].benchmark.reason;
    EXPECT_TRUE(cells[1].stages.empty());
}

// A user's ONNX file (here the zoo's mobilenet export, copied out of the cache) runs with the plan's steps, and
// without them is skipped with the reason.
TEST(Pipeline, AUsersModelRunsWithThePlansStepsAndIsSkippedWithoutThem) {
#if !INFERBENCH_HAVE_ONNXRUNTIME
    GTEST_SKIP() << "ONNX Runtime is not built";
#endif
    ScratchDir dir;
    dir.write("plan.yaml", plan("mobilenet", "  mode: sequential\n", 1));
    ASSERT_EQ(dir.run("run plan.yaml --db first.db --quiet").exit_code, 0);
    std::filesystem::copy_file(dir.file("cache/mobilenet-g1-s42.onnx"), dir.file("mine.onnx"));
    const std::string steps = "  mode: sequential\n  steps:\n    resize: shorter_side_crop\n    input_size: 224x224\n"
                              "    resize_shorter: 256\n    mean: [123.675, 116.28, 103.53]\n"
                              "    std: [58.395, 57.12, 57.375]\n    post: softmax_topk\n    top_k: 5\n";
    dir.write("mine.yaml", plan("mine.onnx", steps, 1));
    const auto run = dir.run("run mine.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    dir.write("bare.yaml", plan("mine.onnx", "  mode: sequential\n", 1));
    const auto skipped = dir.run("run bare.yaml --db r.db --quiet");
    EXPECT_EQ(skipped.exit_code, 3) << "nothing ran: " << skipped.err;
    const auto cells = stored(dir);
    ASSERT_EQ(cells.size(), 2u);
    expect_consistent(cells[0], kClassifierStages, true);
    EXPECT_EQ(cells[1].benchmark.status, BenchmarkStatus::skipped);
    EXPECT_NE(cells[1].benchmark.reason.find("give its steps in pipeline.steps"), std::string::npos)
        << cells[1].benchmark.reason;
}

TEST(Pipeline, TheExamplePlanExpandsToItsCells) {
    ScratchDir dir;
    const auto run = dir.run(std::string("run '") + INFERBENCH_SOURCE_DIR + "/plans/pipeline.yaml' --dry-run");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("12 benchmarks"), std::string::npos) << "3 models x 2 batch sizes x 2 modes: " << run.err;
    EXPECT_NE(run.out.find("ssd-mobilenet onnxruntime cpu fp32 b8 pipeline cpu/cpu overlapped"), std::string::npos)
        << run.out;
}

TEST(Pipeline, DryRunListsTheCellsAndWhyAModelWithoutImagesIsSkipped) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [mobilenet, bert]\nbackends: [onnxruntime]\nbatch_sizes: [8]\n"
                           "pipeline:\n  images: synthetic\n  mode: [sequential, overlapped]\n");
    const auto run = dir.run("run plan.yaml --dry-run");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("mobilenet onnxruntime cpu fp32 b8 pipeline cpu/cpu overlapped"), std::string::npos) << run.out;
    EXPECT_NE(run.out.find("takes token ids"), std::string::npos) << run.out;
    const auto with_steps = dir.run("run plan.yaml --dry-run --set pipeline.steps.top_k=3");
    EXPECT_NE(with_steps.out.find("pipeline.steps are a user's model's; zoo model mobilenet runs its published"),
              std::string::npos)
        << with_steps.out;
    const auto gpu = dir.run("run plan.yaml --dry-run --set pipeline.preprocess=gpu");
    EXPECT_NE(gpu.out.find("runs stages on the cell's GPU, and this cell runs on cpu"), std::string::npos) << gpu.out;
    const auto help = dir.run("run --help");
    EXPECT_NE(help.out.find("queue_depth"), std::string::npos) << "run --help lists the pipeline keys: " << help.out;
    EXPECT_NE(help.out.find("steps.iou_threshold"), std::string::npos) << help.out;
}

}  // namespace
}  // namespace inferbench
