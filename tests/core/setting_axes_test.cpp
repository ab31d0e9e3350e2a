// Scenario settings as sweep axes: concurrency, target_qps and the other load numbers may be lists, in a plan
// file or as --set KEY=A,B,C; each value becomes cells of its own, which carry it in their spec and variant.
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

Plan checked(const std::string& yaml) { return testing::checked_plan(yaml); }

std::string error_of(const std::function<void()>& make) {
    try {
        make();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(SettingAxes, AYamlListIsASweepOfItsValues) {
    const Plan plan = checked("models: [null]\nbackends: [null]\nscenario: concurrency\nconcurrency: [1, 2, 4]\n");
    ASSERT_EQ(plan.setting_axes.size(), 1u);
    EXPECT_EQ(plan.setting_axes[0].key, "concurrency");
    ASSERT_EQ(plan.setting_axes[0].values.size(), 3u);
    EXPECT_EQ(plan.setting_axes[0].values[2].scenario.concurrency, 4);
    EXPECT_EQ(plan.settings.scenario.concurrency, 1) << "the plan's setting is the first value";
}

TEST(SettingAxes, SetWithACommaListSweepsAndASingleValueReplacesTheSweep) {
    Plan plan = checked("models: [null]\nbackends: [null]\nscenario: server\ntarget_qps: [5, 6]\n");
    apply_override(plan, "target_qps", "10,20,40", "--set target_qps=10,20,40", kVocabulary);
    ASSERT_EQ(plan.setting_axes.size(), 1u);
    ASSERT_EQ(plan.setting_axes[0].values.size(), 3u);
    EXPECT_DOUBLE_EQ(plan.setting_axes[0].values[1].scenario.target_qps, 20);
    apply_override(plan, "target_qps", "30", "--set target_qps=30", kVocabulary);
    EXPECT_TRUE(plan.setting_axes.empty());
    EXPECT_DOUBLE_EQ(plan.settings.scenario.target_qps, 30);
}

TEST(SettingAxes, EachValueIsReadWithTheSettingsRulesAndListedOnce) {
    Plan plan;
    EXPECT_EQ(error_of([&] { apply_override(plan, "concurrency", "1,0", "--set concurrency=1,0", kVocabulary); }),
              "--set concurrency=1,0: concurrency: '0' is below the minimum 1");
    EXPECT_EQ(error_of([&] { apply_override(plan, "concurrency", "2,2", "--set concurrency=2,2", kVocabulary); }),
              "--set concurrency=2,2: concurrency lists '2' twice; list each value once");
    EXPECT_EQ(error_of([&] { checked("target_qps: [10, 10.0]\n"); }),
              "plan.yaml:1:18: target_qps lists '10.0' twice; list each value once (first at 1:14)");
    // A setting that is not an axis still takes one value.
    EXPECT_EQ(error_of([&] { checked("duration: [1s, 2s]\n"); }), "plan.yaml:1:11: duration must be a single duration");
    EXPECT_NE(error_of([&] { apply_override(plan, "duration", "1s,2s", "--set duration=1s,2s", kVocabulary); }), "");
}

TEST(SettingAxes, TheMatrixHasACellPerValueEachCarryingIt) {
    Plan plan = checked("models: [null]\nbackends: [null]\nbatch_sizes: [1, 2]\nscenario: server\n"
                        "target_qps: [10, 20]\nlatency_bound: [5ms, 50ms]\n");
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 8u);
    // Batch size outer, the swept settings inner, the first axis given outermost of them.
    EXPECT_EQ(cells[0].batch_size, 1);
    EXPECT_DOUBLE_EQ(cells[0].scenario.target_qps, 10);
    EXPECT_EQ(cells[0].scenario.latency_bound_ns, 5'000'000);
    EXPECT_EQ(cells[0].variant, "target_qps=10 latency_bound=5ms");
    EXPECT_EQ(cells[1].variant, "target_qps=10 latency_bound=50ms");
    EXPECT_DOUBLE_EQ(cells[3].scenario.target_qps, 20);
    EXPECT_EQ(cells[3].scenario.latency_bound_ns, 50'000'000);
    EXPECT_EQ(cells[4].batch_size, 2);
    EXPECT_EQ(cells[4].label(), "null null cpu fp32 b2 [target_qps=10 latency_bound=5ms]");
    EXPECT_EQ(spec_from_json(spec_to_json(cells[3])).scenario, cells[3].scenario) << "the worker gets its value";
}

TEST(SettingAxes, BackendOptionsAndSettingsShareTheVariant) {
    const Plan plan = checked("models: [mobilenet]\nbackends: [onnxruntime]\nbatch_sizes: [1]\nscenario: concurrency\n"
                              "concurrency: [1, 2]\nbackend_options:\n  onnxruntime: {threads: [1, 2]}\n");
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 4u);
    EXPECT_EQ(cells[0].variant, "threads=1 concurrency=1");
    EXPECT_EQ(cells[3].variant, "threads=2 concurrency=2");
}

TEST(SettingAxes, EveryValueIsCheckedAgainstTheOtherSettings) {
    // samples_per_query 8 is divisible by batch 4, 6 is not: the second value is refused before anything runs.
    EXPECT_EQ(error_of([&] {
                  checked("models: [null]\nbackends: [null]\nbatch_sizes: [4]\nscenario: multi_stream\n"
                          "samples_per_query: [8, 6]\n");
              }),
              "plan.yaml:5:20: multi_stream runs a query of samples_per_query 6 as inferences of the batch size, but "
              "batch size 4 does not divide it; use batch sizes that divide 6");
}

TEST(SettingAxes, AStoredPlanReadsBackItsSweeps) {
    const Plan plan = checked("models: [null]\nbackends: [null]\nbatch_sizes: [1]\nscenario: concurrency\n"
                              "concurrency: [1, 2, 4]\nstreams: [1, 2]\n");
    const Plan again = plan_from_json(plan_to_json(plan), "the stored plan", kVocabulary);
    const auto before = expand_matrix(plan);
    const auto after = expand_matrix(again);
    ASSERT_EQ(after.size(), 6u);
    ASSERT_EQ(after.size(), before.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
        EXPECT_EQ(after[i].scenario, before[i].scenario);
        EXPECT_EQ(after[i].variant, before[i].variant);
    }
}

}  // namespace
}  // namespace inferbench
