// What the CLI runs of a plan's scenario settings: a list of concurrency or target_qps values is a sweep whose
// cells each carry their value into the summary; find_peak's steps measure the queries that can pass; and
// --dry-run marks the cells the run would skip, with the reason the run would give.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e/cli_harness.hpp"
#include "models/onnx_builder.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

nlohmann::json summary_rows(const ScratchDir& dir) {
    const auto summary = dir.run("summary --db r.db --json");
    EXPECT_EQ(summary.exit_code, 0) << summary.err;
    return nlohmann::json::parse(summary.out)["rows"];
}

TEST(ScenarioSweep, ConcurrencyAndTargetQpsListsAreCellsEachWithItsValue) {
    ScratchDir dir;
    const auto run = dir.run("run --backend null --model null --batch 1 --scenario concurrency --set concurrency=1,2 "
                             "--duration 200ms --warmup 50ms --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    auto rows = summary_rows(dir);
    ASSERT_EQ(rows.size(), 2u) << rows.dump();
    EXPECT_EQ(rows[0]["scenario"], "concurrency 1");
    EXPECT_EQ(rows[0]["variant"], "concurrency=1");
    EXPECT_EQ(rows[1]["scenario"], "concurrency 2");
    EXPECT_EQ(rows[1]["variant"], "concurrency=2");

    ScratchDir server;
    const auto served = server.run("run --backend null --model null --batch 1 --scenario server "
                                   "--set target_qps=200,400 --set latency_bound=1s --duration 300ms --warmup 50ms "
                                   "--db r.db --quiet");
    ASSERT_EQ(served.exit_code, 0) << served.err;
    rows = summary_rows(server);
    ASSERT_EQ(rows.size(), 2u) << rows.dump();
    EXPECT_EQ(rows[0]["variant"], "target_qps=200");
    EXPECT_DOUBLE_EQ(rows[0]["target_qps"].get<double>(), 200);
    EXPECT_EQ(rows[1]["variant"], "target_qps=400");
    EXPECT_DOUBLE_EQ(rows[1]["target_qps"].get<double>(), 400);
}

TEST(ScenarioSweep, DryRunListsEachValueAsACell) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null --model null --batch 1,2 --scenario server --set target_qps=10,20,40 "
                           "--dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("   3  null null cpu fp32 b1 [target_qps=40]"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("   4  null null cpu fp32 b2 [target_qps=10]"), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("6 benchmarks"), std::string::npos) << r.err;
}

// The fault test backend runs cpu and fp32 only: its cuda and fp16 cells are certain to be skipped, and the
// listing says so with the run's own reasons, while the null backend's cells are listed plain.
TEST(ScenarioSweep, DryRunMarksTheCellsTheRunWouldSkip) {
    ScratchDir dir;
    const auto r = dir.run("run --backend null,fault --model null --device cpu,cuda --precision fp32,fp16 --batch 1 "
                           "--dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("   1  null null cpu fp32 b1\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("null fault cpu fp32 b1\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("null fault cpu fp16 b1  skipped: backend fault has no fp16 support\n"), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("null fault cuda:0 fp32 b1  skipped: backend fault does not run on cuda:0\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.err.find("8 benchmarks, 3 of them would be skipped"), std::string::npos) << r.err;
}

#if INFERBENCH_HAVE_ONNXRUNTIME
// y = op(x), x of [N, ...in], y of [N, ...out].
std::string one_op_model(const std::string& op, const std::vector<std::int64_t>& in, const std::vector<std::int64_t>& out) {
    const auto shape = [](const std::vector<std::int64_t>& dims) {
        std::vector<models::OnnxDim> batched{models::OnnxDim::symbolic("N")};
        for (const std::int64_t d : dims) batched.push_back(models::OnnxDim::fixed(d));
        return batched;
    };
    models::GraphBuilder g(op, 1);
    g.add_input("x", models::OnnxElemType::float32, shape(in));
    g.add_node({op, "op", {"x"}, {"y"}, {}});
    g.add_output("y", models::OnnxElemType::float32, shape(out));
    return g.serialize();
}

// fp16 on ONNX Runtime's CPU provider runs where the provider has a float16 kernel for every op of the model:
// it has none for Relu (the cell is skipped, with the same reason in the listing and in the run, and nothing is
// converted for it), and one for Flatten (the cell runs).
TEST(ScenarioSweep, DryRunJudgesFp16OnOnnxRuntimesCpuProviderForTheModelAsTheRunDoes) {
    ScratchDir dir;
    dir.write("relu.onnx", one_op_model("Relu", {4}, {4}));
    dir.write("flatten.onnx", one_op_model("Flatten", {4, 4}, {16}));
    const std::string cells = "run --backend onnxruntime --device cpu --precision fp16 --batch 1 "
                              "--model relu.onnx,flatten.onnx ";
    const auto dry = dir.run(cells + "--dry-run");
    ASSERT_EQ(dry.exit_code, 0) << dry.err;
    const std::string skipped = "relu.onnx onnxruntime cpu fp16 b1  skipped: ";
    const auto at = dry.out.find(skipped);
    ASSERT_NE(at, std::string::npos) << dry.out;
    const auto end = dry.out.find('\n', at);
    const std::string reason = dry.out.substr(at + skipped.size(), end - at - skipped.size());
    EXPECT_NE(reason.find("fp16 on the CPU: ONNX Runtime "), std::string::npos) << reason;
    EXPECT_NE(reason.find("has no float16 kernel for Relu of the float16 model of relu.onnx"), std::string::npos)
        << reason;
    EXPECT_NE(dry.out.find("flatten.onnx onnxruntime cpu fp16 b1\n"), std::string::npos) << dry.out;
    EXPECT_NE(dry.err.find("2 benchmarks, 1 of them would be skipped"), std::string::npos) << dry.err;

    const auto run = dir.run(cells + "--duration 50ms --warmup 0s --min-iterations 2 --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto benchmarks = store::ResultsStore::open(dir.file("r.db")).benchmarks();
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(benchmarks[0].status, BenchmarkStatus::skipped);
    EXPECT_EQ(benchmarks[0].reason, reason);
    EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::ok) << benchmarks[1].reason;
    // Skipped before its conversion: the converted-model cache holds the Flatten's float16 model only.
    std::vector<std::string> converted;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir.path() / "cache"))
        if (entry.path().extension() == ".onnx") converted.push_back(entry.path().filename().string());
    ASSERT_EQ(converted.size(), 1u);
    EXPECT_TRUE(converted[0].starts_with("flatten.fp16.")) << converted[0];
}
#endif

// Resuming lists the benchmarks without an ok result, a skipped one again with its reason.
TEST(ScenarioSweep, ResumesDryRunMarksTheCellsItWouldSkipAgain) {
    ScratchDir dir;
    const auto run = dir.run("run --backend null,fault --model null --precision fp32,fp16 --batch 1 --duration 50ms "
                             "--warmup 10ms --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto r = dir.run("run --resume latest --db r.db --dry-run");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("   4  null fault cpu fp16 b1  skipped: backend fault has no fp16 support\n"),
              std::string::npos)
        << r.out;
}

// A step of 50 ms at a backend's 5000 queries a second holds 250 queries, fewer than LoadGen's early stopping
// needs to pass any p99: every step measures 662 (said before the run), so the search can find a peak.
TEST(ScenarioSweep, FindPeakStepsMeasureTheQueriesTheirVerdictNeeds) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [scripted]\nbatch_sizes: [1]\nwarmup: 100ms\nbackend_options:\n"
                           "  scripted: {latency_us: \"200\"}\nscenario: server\nfind_peak: true\n"
                           "latency_bound: 100ms\nduration: 50ms\n");
    const auto run = dir.run("run plan.yaml --db r.db");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.err.find("each find_peak step measures at least 662 queries"), std::string::npos) << run.err;
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    const auto series = store.series(store.benchmarks().at(0).benchmark_id);
    bool found = false;
    for (const auto& s : series) {
        if (s.name != "find_peak_queries") continue;
        found = true;
        ASSERT_FALSE(s.values.empty());
        for (const double queries : s.values) EXPECT_GE(queries, 662) << "a step cut below what can pass";
    }
    EXPECT_TRUE(found);
}

// max_iterations 700 holds a 2 s step at up to 315 queries a second, below the backend's 1000: no faster rate is
// tried (its step would be cut short, INVALID for that alone), and the peak found there is said to be a lower bound.
TEST(ScenarioSweep, FindPeakTriesNoRateMaxIterationsCannotHold) {
    ScratchDir dir;
    dir.write("plan.yaml", "models: [null]\nbackends: [scripted]\nbatch_sizes: [1]\nwarmup: 100ms\nbackend_options:\n"
                           "  scripted: {latency_us: \"1000\"}\nscenario: server\nfind_peak: true\n"
                           "latency_bound: 500ms\nduration: 2s\nmax_iterations: 700\n");
    const auto run = dir.run("run plan.yaml --db r.db --quiet");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto rows = summary_rows(dir);
    const auto& row = rows.at(0);
    auto store = store::ResultsStore::open(dir.file("r.db"), store::ResultsStore::Access::read);
    for (const auto& s : store.series(store.benchmarks().at(0).benchmark_id)) {
        if (s.name != "find_peak_qps") continue;
        for (const double qps : s.values) EXPECT_LE(qps, 315.0 + 1e-9) << "a rate max_iterations cannot hold";
    }
    // A host too busy to serve 315 a second within 500 ms (two tests at a time on two cores) finds a lower peak.
    if (!row["peak_qps"].is_string() || row["peak_qps"] == "none")
        GTEST_SKIP() << "this host did not serve 315 queries a second: " << row.dump();
    EXPECT_EQ(row["peak_qps"], ">= 315.0") << row.dump();
    EXPECT_NE(row["note"].get<std::string>().find("find_peak: the peak is at least 315.0 qps"), std::string::npos)
        << row["note"];
}

}  // namespace
}  // namespace inferbench
