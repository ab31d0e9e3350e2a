// The load scenario's settings as a plan gives them: read into their types, each impossible value or
// combination one error line naming where it was written, and carried unchanged to every cell.
#include <gtest/gtest.h>

#include "common/checked_plan.hpp"
#include "core/error.hpp"
#include "core/plan/matrix.hpp"
#include "core/plan/plan.hpp"
#include "core/plan/plan_scenario.hpp"
#include "core/plan/spec_json.hpp"

namespace inferbench {
namespace {

const PlanVocabulary& kVocabulary = testing::kPlanTestVocabulary;

Plan checked(const std::string& yaml) { return testing::checked_plan(yaml); }

std::string error_of(const std::string& yaml) {
    try {
        checked(yaml);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(PlanScenario, DefaultsAreLoadGens) {
    const Plan plan;
    const ScenarioSettings& s = plan.settings.scenario;
    EXPECT_EQ(s.scenario, Scenario::single_stream);
    EXPECT_EQ(s.target_qps, 1.0);
    EXPECT_EQ(s.latency_bound_ns, 100'000'000);
    EXPECT_EQ(s.samples_per_query, 8);
    EXPECT_EQ(s.streams, 1);
}

TEST(PlanScenario, SettingsReachEveryCell) {
    const Plan plan = checked(
        "batch_sizes: [1, 8]\nscenario: server\ntarget_qps: 1500.5\nlatency_bound: 15ms\nstreams: 2\nbatcher: true\n"
        "max_queue_delay: 500us\n");
    const auto cells = expand_matrix(plan);
    ASSERT_FALSE(cells.empty());
    for (const auto& cell : cells) {
        EXPECT_EQ(cell.scenario.scenario, Scenario::server);
        EXPECT_DOUBLE_EQ(cell.scenario.target_qps, 1500.5);
        EXPECT_EQ(cell.scenario.latency_bound_ns, 15'000'000);
        EXPECT_EQ(cell.scenario.streams, 2);
        EXPECT_TRUE(cell.scenario.batcher);
        EXPECT_EQ(cell.scenario.batcher_max_queue_delay_ns, 500'000);
        EXPECT_EQ(spec_from_json(spec_to_json(cell)).scenario, cell.scenario) << "the worker gets it unchanged";
    }
    // A stored plan reads back with every scenario setting.
    const Plan again = plan_from_json(plan_to_json(plan), "the stored plan", kVocabulary);
    EXPECT_EQ(again.settings.scenario, plan.settings.scenario);
}

TEST(PlanScenario, ACellStoredBeforeScenariosRanSingleStream) {
    nlohmann::json json = spec_to_json(BenchmarkSpec{});
    json.erase("scenario");
    EXPECT_EQ(scenario_from_json(json), ScenarioSettings{});
}

TEST(PlanScenario, ImpossibleValuesAreErrorsWhereWritten) {
    EXPECT_EQ(error_of("scenario: server\ntarget_qps: 0\n"), "plan.yaml:2:13: target_qps: '0' must be above 0");
    EXPECT_EQ(error_of("target_qps: -5\n"), "plan.yaml:1:13: target_qps: '-5' must be above 0");
    EXPECT_EQ(error_of("target_qps: lots\n"), "plan.yaml:1:13: target_qps: 'lots' is not a number");
    EXPECT_EQ(error_of("target_qps: inf\n"), "plan.yaml:1:13: target_qps: 'inf' is not a number");
    EXPECT_EQ(error_of("latency_bound: 0s\n"), "plan.yaml:1:16: latency_bound: '0s' is below the minimum 1ns");
    EXPECT_EQ(error_of("scenario: loadgen\n"),
              "plan.yaml:1:11: scenario: unknown value 'loadgen'; valid choices: single_stream, multi_stream, server, "
              "offline, concurrency");
    EXPECT_EQ(error_of("streams: 0\n"), "plan.yaml:1:10: streams: '0' is below the minimum 1");
    EXPECT_EQ(error_of("concurrency: 5000\n"), "plan.yaml:1:14: concurrency: '5000' is above the maximum 4096");
}

TEST(PlanScenario, SettingsThatDoNotGoTogetherNameTheKeyAtFault) {
    EXPECT_EQ(error_of("models: [null]\nfind_peak: true\n"),
              "plan.yaml:2:12: find_peak searches the highest server QPS, but the scenario is single_stream; set "
              "scenario: server, or drop find_peak");
    EXPECT_EQ(error_of("scenario: offline\nbatcher: yes\n"),
              "plan.yaml:2:10: the batcher batches queued queries of the server and concurrency scenarios, but the "
              "scenario is offline; set scenario: server or concurrency, or drop batcher");
    EXPECT_EQ(error_of("streams: 4\n"),
              "plan.yaml:1:10: single_stream runs one query at a time, which one of 4 streams would serve; for 4 in "
              "flight use scenario: concurrency with concurrency: 4");
    EXPECT_EQ(error_of("scenario: multi_stream\nbatch_sizes: [1, 3]\nsamples_per_query: 8\n"),
              "plan.yaml:3:20: multi_stream runs a query of samples_per_query 8 as inferences of the batch size, but "
              "batch size 3 does not divide it; use batch sizes that divide 8");
    EXPECT_EQ(error_of("scenario: multi_stream\nbatch_sizes: [16]\n"),
              "plan.yaml:2:14: multi_stream runs a query of samples_per_query 8 as inferences of the batch size, but "
              "batch size 16 does not divide it; use batch sizes that divide 8");
    EXPECT_EQ(error_of("scenario: multi_stream\nbatch_sizes: [1, 2, 4, 8]\n"), "");
}

// The scenarios other than single_stream end by LoadGen's rules and overlap their queries: a stopping
// criterion or an L2 flush between iterations would be ignored, so the plan is refused where either is.
TEST(PlanScenario, StoppingCriteriaAndTheL2FlushAreSingleStreamOnly) {
    EXPECT_EQ(error_of("scenario: server\nstop: stdrel\n"),
              "plan.yaml:2:7: stop: stdrel ends a single_stream loop by its noise, but the scenario is server, which "
              "ends by its duration and query count; use stop: fixed, or scenario: single_stream");
    EXPECT_EQ(error_of("devices: [\"cuda:0\"]\nscenario: offline\nl2_flush: true\n"),
              "plan.yaml:3:11: l2_flush flushes the L2 cache between one-at-a-time iterations, but the scenario is "
              "offline, whose queries overlap; drop l2_flush, or use scenario: single_stream");
    EXPECT_EQ(error_of("stop: entropy\n"), "");
    EXPECT_EQ(error_of("devices: [\"cuda:0\"]\nl2_flush: true\nstop: stdrel\n"), "");
}

TEST(PlanScenario, AFlagIsNamedAsTheOriginOfItsError) {
    Plan plan;
    apply_override(plan, "streams", "2", "--set streams=2", kVocabulary);
    try {
        check_plan(plan);
        FAIL() << "single_stream with 2 streams";
    } catch (const UserError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("--set streams=2: single_stream runs one query at a time", 0), 0u)
            << e.what();
    }
}

// LoadGen's early stopping needs 64 queries for single_stream's p90 estimate and 662 for multi_stream's p99
// (MLPerf's rules, appendix "Early Stopping Criterion"): a fixed run measures at least that many where the plan
// left min_iterations alone, within max_iterations.
TEST(PlanScenario, AClosedLoopScenarioMeasuresTheQueriesItsVerdictNeeds) {
    Plan plan;  // the default plan: single_stream, min_iterations 10
    const auto note = raise_min_iterations_for_verdict(plan);
    EXPECT_EQ(plan.settings.loop.min_iterations, 64);
    ASSERT_TRUE(note);
    EXPECT_EQ(*note, "<default plan>: each cell measures at least 64 queries (min_iterations), as LoadGen's early "
                     "stopping needs 64 for the single_stream p90 estimate; set min_iterations to choose another");
    EXPECT_FALSE(raise_min_iterations_for_verdict(plan)) << "once raised, nothing more to say";

    Plan multi = checked("models: [null]\nbackends: [null]\nscenario: multi_stream\nbatch_sizes: [8]\n");
    ASSERT_TRUE(raise_min_iterations_for_verdict(multi));
    EXPECT_EQ(multi.settings.loop.min_iterations, 662);

    Plan capped = checked("models: [null]\nbackends: [null]\nscenario: multi_stream\nbatch_sizes: [8]\n"
                          "max_iterations: 500\n");
    ASSERT_TRUE(raise_min_iterations_for_verdict(capped));
    EXPECT_EQ(capped.settings.loop.min_iterations, 500);

    // The server's find_peak: every step measures the queries that can pass a p99 (a 1 s step at 100 qps has 100).
    Plan peak = checked("models: [null]\nbackends: [null]\nscenario: server\nfind_peak: true\nduration: 1s\n");
    const auto peak_note = raise_min_iterations_for_verdict(peak);
    EXPECT_EQ(peak.settings.loop.min_iterations, 662);
    ASSERT_TRUE(peak_note);
    EXPECT_EQ(*peak_note, "plan.yaml: each find_peak step measures at least 662 queries (min_iterations), as "
                          "LoadGen's early stopping needs 662 to show a p99 within the bound with one query over "
                          "it; set min_iterations to choose another");

    for (const std::string yaml : {"models: [null]\nbackends: [null]\nmin_iterations: 12\n",
                                   "models: [null]\nbackends: [null]\nstop: stdrel\n",
                                   "models: [null]\nbackends: [null]\nscenario: server\n",
                                   "models: [null]\nbackends: [null]\nscenario: offline\n"}) {
        Plan kept = checked(yaml);
        const std::int64_t before = kept.settings.loop.min_iterations;
        EXPECT_FALSE(raise_min_iterations_for_verdict(kept)) << yaml;
        EXPECT_EQ(kept.settings.loop.min_iterations, before) << yaml;
    }
}

}  // namespace
}  // namespace inferbench
