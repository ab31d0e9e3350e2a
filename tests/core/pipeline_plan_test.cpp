// A plan's `pipeline:` map: its keys read into PipelineSettings, preprocess/postprocess/mode as sweep axes, the
// same keys through --set pipeline.KEY=VALUE, the cells' labels, and the settings through the stored plan and spec.
#include <functional>

#include <gtest/gtest.h>

#include "common/checked_plan.hpp"
#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/spec_json.hpp"

namespace inferbench {
namespace {

const PlanVocabulary& kVocabulary = testing::kPlanTestVocabulary;

std::string error_of(const std::function<void()>& make) {
    try {
        make();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

constexpr const char* kPlan =
    "models: [null]\nbackends: [null]\nbatch_sizes: [8]\n"
    "pipeline:\n  images: synthetic\n  image_count: 16\n  image_size: 320x240\n  threads: 3\n"
    "  mode: [sequential, overlapped]\n  preprocess: cpu\n";

TEST(PipelinePlan, ReadsTheMapIntoTheSettings) {
    const Plan plan = testing::checked_plan(kPlan);
    const PipelineSettings& s = plan.pipeline.settings;
    EXPECT_EQ(s.images, "synthetic");
    EXPECT_EQ(s.image_count, 16);
    EXPECT_EQ(s.image_size, (ImageSize{320, 240}));
    EXPECT_EQ(s.threads, 3);
    EXPECT_EQ(s.mode, PipelineMode::sequential) << "an axis's first value is the plan's setting";
    EXPECT_FALSE(s.steps);
}

TEST(PipelinePlan, ModeListIsAnAxisAndEachCellSaysItInItsLabel) {
    const auto cells = expand_matrix(testing::checked_plan(kPlan));
    ASSERT_EQ(cells.size(), 2u);
    EXPECT_EQ(cells[0].pipeline.mode, PipelineMode::sequential);
    EXPECT_EQ(cells[1].pipeline.mode, PipelineMode::overlapped);
    EXPECT_EQ(cells[1].label(), "null null cpu fp32 b8 pipeline cpu/cpu overlapped");
    EXPECT_EQ(cells[0].pipeline.threads, 3);
}

TEST(PipelinePlan, WithoutPipelineNoCellIsAPipelineCell) {
    const auto cells = expand_matrix(testing::checked_plan("models: [null]\nbackends: [null]\nbatch_sizes: [1]\n"));
    ASSERT_EQ(cells.size(), 1u);
    EXPECT_FALSE(cells[0].pipeline.active());
    EXPECT_EQ(cells[0].label(), "null null cpu fp32 b1");
}

TEST(PipelinePlan, StepsOfAUsersModelAreReadFromTheirOwnMap) {
    const Plan plan = testing::checked_plan(
        "models: [null]\nbackends: [null]\npipeline:\n  images: synthetic\n  steps:\n    resize: letterbox\n"
        "    input_size: 416x416\n    mean: [0, 0, 0]\n    std: [255, 255, 255]\n    post: yolo_boxes\n"
        "    iou_threshold: 0.45\n");
    ASSERT_TRUE(plan.pipeline.settings.steps);
    const PipelineSteps& steps = *plan.pipeline.settings.steps;
    EXPECT_EQ(steps.resize, ResizeRule::letterbox);
    EXPECT_EQ(steps.input_size, (ImageSize{416, 416}));
    EXPECT_EQ(steps.std[2], 255.0F);
    EXPECT_EQ(steps.post, PostProcess::yolo_boxes);
    EXPECT_FLOAT_EQ(steps.iou_threshold, 0.45F);
}

TEST(PipelinePlan, SetOverridesAKeyAndSweepsAnAxis) {
    Plan plan = testing::checked_plan(kPlan);
    apply_override(plan, "pipeline.queue_depth", "4", "--set pipeline.queue_depth=4", kVocabulary);
    apply_override(plan, "pipeline.mode", "overlapped", "--set pipeline.mode=overlapped", kVocabulary);
    apply_override(plan, "pipeline.preprocess", "cpu,gpu", "--set pipeline.preprocess=cpu,gpu", kVocabulary);
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 2u) << "mode's list was replaced by one value; preprocess swept";
    EXPECT_EQ(cells[0].pipeline.queue_depth, 4);
    EXPECT_EQ(cells[1].label(), "null null cpu fp32 b8 pipeline gpu/cpu overlapped");
}

TEST(PipelinePlan, BadValuesAreOneLineNamingTheKeyAndTheFix) {
    EXPECT_NE(error_of([] { testing::checked_plan("models: [null]\npipeline:\n  images: synthetic\n  threads: 0\n"); })
                  .find("4:12: pipeline.threads: '0' must be a whole number from 1 to 256"),
              std::string::npos);
    EXPECT_NE(error_of([] { testing::checked_plan("models: [null]\npipeline:\n  images: synthetic\n  colour: red\n"); })
                  .find("unknown key 'pipeline.colour'; valid keys: images,"),
              std::string::npos);
    EXPECT_NE(error_of([] { testing::checked_plan("models: [null]\npipeline:\n  images: synthetic\n  threads: [1, 2]\n"); })
                  .find("pipeline.threads takes one value"),
              std::string::npos);
    EXPECT_NE(error_of([] { testing::checked_plan("models: [null]\npipeline:\n  image_count: 4\n"); })
                  .find("pipeline.images is missing"),
              std::string::npos);
    EXPECT_NE(error_of([] { testing::checked_plan("models: [null]\npipeline:\n  images: synthetic\n  image_size: 0x10\n"); })
                  .find("pipeline.image_size: '0x10' must be WIDTHxHEIGHT"),
              std::string::npos);
    EXPECT_NE(error_of([] { testing::checked_plan("models: [null]\npipeline:\n  images: synthetic\n  mode: [overlapped, overlapped]\n"); })
                  .find("lists 'overlapped' twice"),
              std::string::npos);
    Plan plan = testing::checked_plan(kPlan);
    EXPECT_NE(error_of([&] { apply_override(plan, "pipeline.mode", "fast", "--set pipeline.mode=fast", kVocabulary); })
                  .find("--set pipeline.mode=fast: pipeline.mode: unknown value 'fast'; valid choices: sequential, overlapped"),
              std::string::npos);
}

TEST(PipelinePlan, ARelativeFolderBecomesAbsoluteInTheCell) {
    const auto cells = expand_matrix(testing::checked_plan("models: [null]\nbackends: [null]\nbatch_sizes: [1]\npipeline:\n  images: photos\n"));
    ASSERT_EQ(cells.size(), 1u);
    EXPECT_TRUE(cells[0].pipeline.images.starts_with("/"));
    EXPECT_TRUE(cells[0].pipeline.images.ends_with("/photos"));
}

TEST(PipelinePlan, TheStoredPlanAndSpecGiveTheSameSettingsBack) {
    Plan plan = testing::checked_plan(kPlan);
    apply_override(plan, "pipeline.steps.mean", "1,2,3", "--set", kVocabulary);
    const Plan back = plan_from_json(plan_to_json(plan), "stored", kVocabulary);
    EXPECT_EQ(back.pipeline.settings, plan.pipeline.settings);
    EXPECT_EQ(back.pipeline.axes, plan.pipeline.axes);
    for (const BenchmarkSpec& cell : expand_matrix(plan)) {
        const BenchmarkSpec again = spec_from_json(spec_to_json(cell));
        EXPECT_EQ(again.pipeline, cell.pipeline);
    }
    const auto plain = expand_matrix(testing::checked_plan("models: [null]\nbackends: [null]\n"));
    EXPECT_FALSE(spec_to_json(plain[0]).contains("pipeline"));
}

}  // namespace
}  // namespace inferbench
