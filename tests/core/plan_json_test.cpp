// A plan stored with a run (plan_to_json) reads back as the same plan, so a resumed run expands to the
// same cells in the same order.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "mobilenet", "null"}, {"onnxruntime", "null", "torch"}};

TEST(PlanJson, ReadsBackAsTheSamePlanAndCells) {
    const Plan plan = parse_plan(R"(
name: "nightly \"quoted\" é"
models: [resnet50, mobilenet]
backends: [onnxruntime, torch]
devices: [cpu, cuda:1]
batch_sizes: [1, 8]
duration: 10s
warmup: 500ms
max_iterations: 0
timeout: 90s
telemetry_enabled: false
exclude:
  - {model: mobilenet, batch_size: 8, device: "cuda:1"}
backend_options:
  torch: {cuda_graph: [false, true], channels_last: true}
)",
                                 "plan.yaml", kVocabulary);
    const Plan back = plan_from_json(plan_to_json(plan), "run 3", kVocabulary);
    EXPECT_EQ(plan_to_json(back), plan_to_json(plan));
    EXPECT_EQ(back.source, "plan.yaml");
    const auto cells = expand_matrix(plan);
    const auto cells_back = expand_matrix(back);
    ASSERT_EQ(cells_back.size(), cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) EXPECT_EQ(cells_back[i].label(), cells[i].label()) << i;
}

TEST(PlanJson, TheDefaultPlanReadsBack) {
    const Plan plan;
    EXPECT_EQ(plan_to_json(plan_from_json(plan_to_json(plan), "run 1", kVocabulary)), plan_to_json(plan));
}

// Stored plans are read back by resume, also those of older versions: the form is pinned.
TEST(PlanJson, TheStoredFormIsPinned) {
    const Plan plan = parse_plan(R"(
name: compare
models: [null]
backends: [null]
devices: [cpu, "cuda:1"]
precisions: [fp32, fp16]
batch_sizes: [1, 08]
duration: 20ms
warmup: 5ms
min_iterations: 2
max_iterations: 0
exclude:
  - {device: "cuda:1", precision: fp16, batch_size: 8}
)",
                                 "plan.yaml", kVocabulary);
    EXPECT_EQ(plan_to_json(plan),
              R"({"source":"plan.yaml","models":["null"],"backends":["null"],"devices":["cpu","cuda:1"],)"
              R"("precisions":["fp32","fp16"],"batch_sizes":[1,8],"input_tokens":[128],"output_tokens":[128],)"
              R"("exclude":[{"device":"cuda:1","precision":"fp16","batch_size":8}],"backend_options":{},)"
              R"("name":"compare","warmup":"5ms","warmup_iterations":"1","duration":"20ms","min_iterations":"2",)"
              R"("max_iterations":"0","timeout":"10m","seed":"42","output_dir":"inferbench-results","db":"","inputs":"",)"
              R"("model_cache":"","telemetry_enabled":"true","telemetry_rate_hz":"10","telemetry_gpu":"auto",)"
              R"("throttle_threshold":"0.75","throttle_policy":"flag","cooldown":"0s","cooldown_max":"2m",)"
              R"("idle_baseline":"3s","l2_flush":"false","sync":"auto",)"
              R"("stop":"fixed","max_noise":"0.5%","min_time":"500ms","stop_timeout":"15s","max_angle":"0.048",)"
              R"("min_r2":"0.36","shard":"","repeats":"1","parallel":"sequential","sampling":"greedy",)"
              R"("scenario":"single_stream","target_qps":"1","latency_bound":"100ms","samples_per_query":"8",)"
              R"("concurrency":"1","streams":"1","find_peak":"false","batcher":"false","max_queue_delay":"1ms"})");
}

// A plan stored before stopping criteria and repeats existed ran fixed, each cell once.
TEST(PlanJson, APlanStoredBeforeStoppingCriteriaReadsBackAsFixedOnce) {
    const Plan plan = plan_from_json(
        R"({"source":"plan.yaml","models":["null"],"backends":["null"],"duration":"20ms","max_iterations":"0",)"
        R"("timeout":"10m","telemetry_gpu":"auto"})",
        "run 3", kVocabulary);
    EXPECT_EQ(plan.settings.loop.stop, StopCriterion::fixed);
    EXPECT_EQ(plan.settings.repeats, 1);
}

// Real numbers are stored in their shortest exact form, so a resumed run measures with the same values.
TEST(PlanJson, StoppingSettingsReadBackExactly) {
    const Plan plan = parse_plan("stop: entropy\nmax_angle: 0.0123456789\nmin_r2: 0.7\nstop_timeout: 2s\nrepeats: 4\n",
                                 "plan.yaml", kVocabulary);
    const Plan back = plan_from_json(plan_to_json(plan), "run 1", kVocabulary);
    EXPECT_EQ(back.settings.loop, plan.settings.loop);
    EXPECT_EQ(back.settings.loop.max_angle_deg, 0.0123456789);
    EXPECT_EQ(back.settings.repeats, 4);
}

// Older versions stored a device as it was spelled ("cuda", "gpu:1"); such a plan reads back as the same devices.
TEST(PlanJson, AnOlderStoredSpellingReadsBack) {
    const Plan plan = plan_from_json(R"({"source":"p.yaml","devices":["cuda","gpu:1"],"batch_sizes":[1,8],)"
                                     R"("exclude":[{"device":"gpu"}]})",
                                     "run 5", kVocabulary);
    EXPECT_EQ(plan.devices, (std::vector<Device>{{DeviceKind::cuda, 0}, {DeviceKind::cuda, 1}}));
    ASSERT_EQ(plan.exclude.size(), 1u);
    EXPECT_EQ(plan.exclude[0].device, (Device{DeviceKind::cuda, 0}));
    EXPECT_EQ(plan.batch_sizes, (std::vector<std::int64_t>{1, 8}));
}

TEST(PlanJson, AStoredPlanThatIsNotAnObjectIsAUserError) {
    try {
        plan_from_json("[1, 2]", "the plan stored with run 4", kVocabulary);
        FAIL();
    } catch (const UserError& e) {
        EXPECT_STREQ(e.what(), "the plan stored with run 4: the stored plan is not a JSON object");
    }
}

}  // namespace
}  // namespace inferbench
