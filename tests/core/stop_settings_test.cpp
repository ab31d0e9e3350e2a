// The stopping criterion's settings and `repeats` as a plan gives them: read once into their types,
// bad values and impossible combinations refused with one line at FILE:LINE:COL (or the flag that gave
// them), carried unchanged into every cell and through the JSON a worker and the store get; and the
// order a run measures its repeats in.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/settings.hpp"
#include "core/plan/spec_json.hpp"

namespace inferbench {
namespace {

const PlanVocabulary kVocabulary{{"resnet50", "null"}, {"onnxruntime", "null"}};

// The error of a plan file, after check_plan as `run` does it; "" when it is accepted.
std::string plan_error(const std::string& yaml) {
    try {
        check_plan(parse_plan(yaml, "plan.yaml", kVocabulary));
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string set_error(const std::string& key, const std::string& value) {
    Plan plan;
    try {
        apply_override(plan, key, value, "--set " + key + "=" + value, kVocabulary);
        check_plan(plan);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(StopSettings, DefaultsAreNvbenchsAndFixed) {
    const LoopSettings loop;
    EXPECT_EQ(loop.stop, StopCriterion::fixed);
    EXPECT_EQ(loop.max_noise_pct, 0.5);
    EXPECT_EQ(loop.min_time_ns, 500'000'000);
    EXPECT_EQ(loop.stop_timeout_ns, 15'000'000'000);
    EXPECT_EQ(loop.max_angle_deg, 0.048);
    EXPECT_EQ(loop.min_r2, 0.36);
    EXPECT_EQ(loop.min_iterations, 10);  // nvbench's min_samples
    EXPECT_EQ(RunSettings{}.repeats, 1);
    EXPECT_EQ(planned_measure_ns(loop), loop.duration_ns);
}

TEST(StopSettings, APlanChoosesACriterionAndItsSettings) {
    const Plan plan = parse_plan("stop: stdrel\nmax_noise: 1.5%\nmin_time: 2s\nstop_timeout: 30s\nrepeats: 5\n",
                                 "plan.yaml", kVocabulary);
    check_plan(plan);
    EXPECT_EQ(plan.settings.loop.stop, StopCriterion::stdrel);
    EXPECT_EQ(plan.settings.loop.max_noise_pct, 1.5);
    EXPECT_EQ(plan.settings.loop.min_time_ns, 2'000'000'000);
    EXPECT_EQ(plan.settings.loop.stop_timeout_ns, 30'000'000'000);
    EXPECT_EQ(plan.settings.repeats, 5);
    EXPECT_EQ(planned_measure_ns(plan.settings.loop), 30'000'000'000);
    // Every cell carries them.
    for (const auto& cell : expand_matrix(plan)) EXPECT_EQ(cell.loop, plan.settings.loop);
}

TEST(StopSettings, TheChoicesAreTheCriteriaWords) {
    EXPECT_EQ(find_setting("stop")->choices, known_stop_criteria());
    EXPECT_EQ(known_convergences(), "fixed, converged, not_converged");
    for (const Convergence c : kAllConvergences) EXPECT_EQ(parse_convergence(to_string(c)), c);
}

TEST(StopSettings, ImpossibleValuesAreOneLineAtTheirPosition) {
    EXPECT_EQ(plan_error("stop: stdrel\nmax_noise: 0%\n"), "plan.yaml:2:12: max_noise: '0%' must be above 0%");
    EXPECT_EQ(plan_error("stop: stdrel\nmax_noise: -1%\n"), "plan.yaml:2:12: max_noise: '-1%' must be above 0%");
    EXPECT_EQ(plan_error("stop: stdrel\nmax_noise: 0.005\n"),
              "plan.yaml:2:12: max_noise: '0.005' has no % sign; write a percentage, e.g. 0.5%");
    EXPECT_EQ(plan_error("stop: stdrel\nmax_noise: 101%\n"),
              "plan.yaml:2:12: max_noise: '101%' is above the maximum 100%");
    EXPECT_EQ(plan_error("repeats: 0\n"), "plan.yaml:1:10: repeats: '0' is below the minimum 1");
    EXPECT_EQ(plan_error("repeats: 1001\n"), "plan.yaml:1:10: repeats: '1001' is above the maximum 1000");
    EXPECT_EQ(plan_error("min_iterations: 0\n"), "plan.yaml:1:17: min_iterations: '0' is below the minimum 1");
    EXPECT_EQ(plan_error("stop: nvbench\n"),
              "plan.yaml:1:7: stop: unknown value 'nvbench'; valid choices: fixed, stdrel, entropy");
    EXPECT_EQ(plan_error("stop: entropy\nmin_r2: 1.5\n"), "plan.yaml:2:9: min_r2: '1.5' is above the maximum 1");
    EXPECT_EQ(plan_error("stop: entropy\nmax_angle: 0\n"), "plan.yaml:2:12: max_angle: '0' must be above 0");
    EXPECT_EQ(plan_error("stop: entropy\nmax_angle: steep\n"), "plan.yaml:2:12: max_angle: 'steep' is not a number");
    EXPECT_EQ(plan_error("stop: stdrel\nstop_timeout: 0s\n"),
              "plan.yaml:2:15: stop_timeout: '0s' is below the minimum 1ns");
}

TEST(StopSettings, ImpossibleCombinationsPointAtTheKeyToChange) {
    EXPECT_EQ(plan_error("stop: stdrel\nmin_time: 20s\n"),
              "plan.yaml:2:11: stop_timeout 15s is below min_time 20s: stdrel could never stop before giving up; "
              "raise stop_timeout or lower min_time");
    EXPECT_EQ(plan_error("stop: stdrel\nmin_time: 2s\nstop_timeout: 1s\n"),
              "plan.yaml:3:15: stop_timeout 1s is below min_time 2s: stdrel could never stop before giving up; "
              "raise stop_timeout or lower min_time");
    EXPECT_EQ(plan_error("stop: entropy\ntimeout: 10s\n"),
              "plan.yaml:2:10: timeout 10s leaves no time to load the model after the warm-up (1s) and stop_timeout "
              "(15s): the worker would be killed before entropy gives up; raise timeout or lower stop_timeout");
    // Every cell of a fixed duration beyond its timeout would time out: refused before anything runs.
    EXPECT_EQ(plan_error("duration: 20s\ntimeout: 10s\n"),
              "plan.yaml:2:10: timeout 10s leaves no time to load the model after the warm-up (1s) and duration "
              "(20s): the worker would be killed before its measured phase ends; raise timeout or lower duration");
    EXPECT_EQ(plan_error("timeout: 6s\n"),
              "plan.yaml:1:10: timeout 6s leaves no time to load the model after the warm-up (1s) and duration "
              "(5s): the worker would be killed before its measured phase ends; raise timeout or lower duration");
    // A setting of another criterion would be ignored in silence.
    EXPECT_EQ(plan_error("max_noise: 1%\n"),
              "plan.yaml:1:12: max_noise is a setting of stop: stdrel, and this plan's stop is fixed; set stop: "
              "stdrel, or leave max_noise out");
    EXPECT_EQ(plan_error("stop: stdrel\nmin_r2: 0.5\n"),
              "plan.yaml:2:9: min_r2 is a setting of stop: entropy, and this plan's stop is stdrel; set stop: "
              "entropy, or leave min_r2 out");
    EXPECT_EQ(plan_error("stop_timeout: 5s\n"),
              "plan.yaml:1:15: stop_timeout is a setting of stop: stdrel or entropy, and this plan's stop is fixed; "
              "set stop: stdrel, or leave stop_timeout out");
    EXPECT_EQ(plan_error("stop: stdrel\nmin_time: 0s\nstop_timeout: 1s\n"), "");
}

TEST(StopSettings, TheCommandLineGetsTheSameLinesAfterItsFlag) {
    EXPECT_EQ(set_error("max_noise", "0%"), "--set max_noise=0%: max_noise: '0%' must be above 0%");
    EXPECT_EQ(set_error("repeats", "0"), "--set repeats=0: repeats: '0' is below the minimum 1");
    EXPECT_EQ(set_error("max_angle", "1"),
              "--set max_angle=1: max_angle is a setting of stop: entropy, and this plan's stop is fixed; set stop: "
              "entropy, or leave max_angle out");
}

TEST(StopSettings, TheSpecCarriesThemToTheWorkerAndTheStore) {
    BenchmarkSpec spec;
    spec.model = "null";
    spec.backend = "null";
    spec.loop.stop = StopCriterion::entropy;
    spec.loop.max_angle_deg = 0.1;
    spec.loop.min_r2 = 0.5;
    spec.loop.stop_timeout_ns = 3'000'000'000;
    spec.loop.max_noise_pct = 0.25;
    spec.loop.min_time_ns = 7;
    EXPECT_EQ(spec_from_json(spec_to_json(spec)).loop, spec.loop);
    // A cell stored before criteria existed ran fixed.
    auto old = spec_to_json(spec);
    for (const char* key : {"stop", "max_noise_pct", "min_time_ns", "stop_timeout_ns", "max_angle_deg", "min_r2"})
        old.erase(key);
    const LoopSettings read = spec_from_json(old).loop;
    EXPECT_EQ(read.stop, StopCriterion::fixed);
    EXPECT_EQ(read.max_noise_pct, LoopSettings{}.max_noise_pct);
    EXPECT_EQ(read.duration_ns, spec.loop.duration_ns);
}

TEST(RunOrder, RepeatsAreInterleavedAcrossCells) {
    const auto order = run_order(3, 2);  // A B C A B C
    const std::vector<CellRepeat> expected = {{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {2, 1}};
    EXPECT_EQ(order, expected);
    EXPECT_EQ(run_order(2, 1), (std::vector<CellRepeat>{{0, 0}, {1, 0}}));
    EXPECT_TRUE(run_order(0, 3).empty());
}

}  // namespace
}  // namespace inferbench
