// The throttling, cooldown, L2-flush and sync settings: read once into their types, errors at the
// plan's position, settings impossible for the plan's devices refused, each cell carrying what applies
// to it, and stored with the cell.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/spec_json.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "null"}, {"onnxruntime", "null", "torch"}};

std::string error_of(const std::string& yaml) {
    try {
        check_plan(parse_plan(yaml, "plan.yaml", kVocabulary));
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string set_error(const std::string& yaml, const std::string& key, const std::string& value) {
    try {
        Plan plan = parse_plan(yaml, "plan.yaml", kVocabulary);
        apply_override(plan, key, value, "--set " + key + "=" + value, kVocabulary);
        check_plan(plan);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(MeasureConditions, SettingsAreReadIntoTheirTypes) {
    const Plan plan = parse_plan("devices: [cuda]\nthrottle_threshold: 80%\nthrottle_policy: discard\ncooldown: idle\n"
                                 "cooldown_max: 5m\nidle_baseline: 2s\nl2_flush: true\nsync: blocking\n",
                                 "plan.yaml", kVocabulary);
    EXPECT_DOUBLE_EQ(plan.settings.throttle_threshold, 0.8);
    EXPECT_EQ(plan.settings.throttle_policy, "discard");
    EXPECT_EQ(plan.settings.cooldown_ns, kCooldownUntilIdle);
    EXPECT_EQ(plan.settings.cooldown_max_ns, 300'000'000'000);
    EXPECT_EQ(plan.settings.idle_baseline_ns, 2'000'000'000);
    EXPECT_TRUE(plan.settings.l2_flush);
    EXPECT_EQ(plan.settings.sync, "blocking");
    EXPECT_NO_THROW(check_plan(plan));
    EXPECT_EQ(parse_plan("cooldown: 30s\nthrottle_threshold: 0.5\n", "p", kVocabulary).settings.cooldown_ns,
              30'000'000'000);
    const Plan defaults;
    EXPECT_DOUBLE_EQ(defaults.settings.throttle_threshold, 0.75);
    EXPECT_EQ(defaults.settings.throttle_policy, "flag");
    EXPECT_EQ(defaults.settings.cooldown_ns, 0);
    EXPECT_FALSE(defaults.settings.l2_flush);
    EXPECT_EQ(defaults.settings.sync, "auto");
}

TEST(MeasureConditions, BadValuesAreErrorsAtTheirPosition) {
    EXPECT_EQ(error_of("throttle_threshold: 1.5\n"),
              "plan.yaml:1:21: throttle_threshold: '1.5' is not a fraction above 0 and at most 1; write e.g. 0.75 or 75%");
    EXPECT_EQ(error_of("throttle_threshold: 0\n").substr(0, 40), "plan.yaml:1:21: throttle_threshold: '0' ");
    EXPECT_EQ(error_of("throttle_threshold: -75%\n").substr(0, 43), "plan.yaml:1:21: throttle_threshold: '-75%' ");
    EXPECT_EQ(error_of("throttle_policy: drop\n"),
              "plan.yaml:1:18: throttle_policy: unknown value 'drop'; valid choices: keep, flag, discard");
    EXPECT_EQ(error_of("sync: busy\n"), "plan.yaml:1:7: sync: unknown value 'busy'; valid choices: auto, spin, yield, blocking");
    EXPECT_EQ(error_of("cooldown: warm\n"),
              "plan.yaml:1:11: cooldown: 'warm' is not a duration; write e.g. 10s, 500ms or 2m, or idle");
    EXPECT_EQ(error_of("cooldown: 2h\n"), "plan.yaml:1:11: cooldown: '2h' is above the maximum 1h");
    EXPECT_EQ(error_of("cooldown_max: 0s\n"), "plan.yaml:1:15: cooldown_max: '0s' is below the minimum 1s");
    EXPECT_EQ(error_of("idle_baseline: 2m\n"), "plan.yaml:1:16: idle_baseline: '2m' is above the maximum 1m");
    EXPECT_EQ(error_of("l2_flush: maybe\n"), "plan.yaml:1:11: l2_flush: 'maybe' is not true or false");
}

TEST(MeasureConditions, GpuSettingsOnAPlanOfCpuDevicesAreErrorsWhereTheyWereGiven) {
    EXPECT_EQ(error_of("devices: [cpu]\nl2_flush: true\n"),
              "plan.yaml:2:11: l2_flush flushes a GPU's L2 cache, and the plan's devices are all cpu; remove l2_flush "
              "or add a cuda device");
    EXPECT_EQ(error_of("sync: spin\n"),
              "plan.yaml:1:7: sync sets how the CPU waits for a GPU, and the plan's devices are all cpu; remove sync or "
              "add a cuda device");
    EXPECT_EQ(error_of("name: x\ncooldown: idle\n"),
              "plan.yaml:2:11: cooldown idle waits for a GPU to cool down, and the plan's devices are all cpu; remove "
              "cooldown or add a cuda device");
    EXPECT_EQ(set_error("devices: [cpu]\n", "l2_flush", "true").substr(0, 45),
              "--set l2_flush=true: l2_flush flushes a GPU's");
    // A fixed cooldown, and the CPU cells of a plan with a GPU, are fine.
    EXPECT_EQ(error_of("cooldown: 10s\n"), "");
    EXPECT_EQ(error_of("devices: [cpu, cuda]\nl2_flush: true\nsync: blocking\ncooldown: idle\n"), "");
}

TEST(MeasureConditions, CooldownIdleNeedsTelemetryAndABaseline) {
    EXPECT_EQ(error_of("devices: [cuda]\ncooldown: idle\nidle_baseline: 0s\n"),
              "plan.yaml:2:11: cooldown idle waits for the idle baseline, and idle_baseline is 0 (not measured); set "
              "idle_baseline (e.g. 3s) or give the cooldown as a time, e.g. 30s");
    EXPECT_EQ(error_of("devices: [cuda]\ncooldown: idle\ntelemetry_gpu: off\n").substr(0, 61),
              "plan.yaml:2:11: cooldown idle reads the GPU's temperature and");
    EXPECT_EQ(set_error("devices: [cuda]\n", "cooldown", "idle"), "");
    EXPECT_EQ(set_error("devices: [cuda]\ntelemetry_enabled: false\n", "cooldown", "idle").substr(0, 40),
              "--set cooldown=idle: cooldown idle reads");
}

TEST(MeasureConditions, EachCellCarriesWhatAppliesToIt) {
    const Plan plan = parse_plan("models: [null]\nbackends: [null]\ndevices: [cpu, cuda:1]\nbatch_sizes: [1]\n"
                                 "throttle_threshold: 0.6\nthrottle_policy: discard\nl2_flush: true\nsync: yield\n",
                                 "plan.yaml", kVocabulary);
    const auto cells = expand_matrix(plan);
    ASSERT_EQ(cells.size(), 2u);
    EXPECT_EQ(cells[0].device.kind, DeviceKind::cpu);
    EXPECT_FALSE(cells[0].conditions.l2_flush) << "the L2 flush concerns CUDA devices only";
    EXPECT_EQ(cells[0].conditions.sync, SyncMode::automatic);
    EXPECT_EQ(cells[0].conditions.throttle_policy, ThrottlePolicy::discard);
    EXPECT_TRUE(cells[1].conditions.l2_flush);
    EXPECT_EQ(cells[1].conditions.sync, SyncMode::yield);
    EXPECT_DOUBLE_EQ(cells[1].conditions.throttle_threshold, 0.6);
}

TEST(MeasureConditions, StoredWithTheCellAndInThePlanEcho) {
    BenchmarkSpec spec;
    spec.conditions = {0.6, ThrottlePolicy::keep, true, SyncMode::blocking};
    const auto json = spec_to_json(spec);
    EXPECT_EQ(json["throttle_policy"], "keep");
    EXPECT_EQ(json["sync"], "blocking");
    EXPECT_EQ(spec_from_json(json).conditions, spec.conditions);
    // A cell stored before the conditions existed has none.
    nlohmann::json old = json;
    for (const char* key : {"throttle_threshold", "throttle_policy", "l2_flush", "sync"}) old.erase(key);
    EXPECT_FALSE(conditions_from_json(old));
    EXPECT_EQ(spec_from_json(old).conditions, MeasureConditions{});
    EXPECT_EQ(describe(spec.conditions), "throttle_policy=keep throttle_threshold=0.6 l2_flush=true sync=blocking");

    Plan plan = parse_plan("models: [null]\nbackends: [null]\ndevices: [cuda]\ncooldown: idle\nthrottle_threshold: 0.8\n",
                           "plan.yaml", kVocabulary);
    const Plan back = plan_from_json(plan_to_json(plan), "run 1", kVocabulary);
    EXPECT_EQ(back.settings.cooldown_ns, kCooldownUntilIdle);
    EXPECT_DOUBLE_EQ(back.settings.throttle_threshold, 0.8);
}

}  // namespace
}  // namespace inferbench
