// The real CLI with the torch-aoti module built over the fake AOTIModelPackageLoader and the fake exporter:
// one plan whose cells compile (the compile stored as load time, with its figures), are skipped (this
// PyTorch cannot), fail with one line (the factory raised: its traceback in the stored output; a package of
// another PyTorch), and the plan goes on; a second run takes the packages from the cache and says so.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/metrics/load_metrics.hpp"
#include "e2e/cli_harness.hpp"
#include "store/results_store.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string fake_environment() {
    return std::string("env INFERBENCH_BACKEND_PATH=") + INFERBENCH_AOTI_FAKE_MODULE_DIR +
           " INFERBENCH_RUNNER_DIR=" + INFERBENCH_FAKE_EXPORTER_DIR +
           " FAKE_SCENARIOS=mobilenet=fake:unsupported,bert=fake:raises,yolov3=fake:foreign";
}

const store::BenchmarkRecord& find(const std::vector<store::BenchmarkRecord>& benchmarks, const std::string& model) {
    for (const auto& b : benchmarks)
        if (b.model == model) return b;
    throw std::runtime_error("no benchmark of " + model);
}

std::optional<double> metric(const store::ResultsStore& store, std::int64_t benchmark_id, std::string_view name) {
    for (const auto& m : store.metrics(benchmark_id))
        if (m.name == name) return m.value;
    return std::nullopt;
}

TEST(AotiE2E, OnePlanCompilesSkipsFailsAndGoesOnThenUsesTheCache) {
    testing::CliScratch dir;
    dir.write("plan.yaml", std::string("models: [resnet50, mobilenet, bert, yolov3]\nbackends: [torch-aoti]\n"
                                       "batch_sizes: [2]\nwarmup: 50ms\nduration: 200ms\nmin_iterations: 5\n"
                                       "backend_options:\n  torch-aoti: {python: ") +
                              INFERBENCH_TEST_PYTHON + ", threads: 1}\n");
    const auto first = dir.run("run plan.yaml --db r.db", fake_environment());
    EXPECT_EQ(first.exit_code, 1) << "two failed\n" << first.err;
    {
        const auto store = store::ResultsStore::open(dir.file("r.db"));
        const auto benchmarks = store.benchmarks();
        ASSERT_EQ(benchmarks.size(), 4u);

        const auto& compiled = find(benchmarks, "resnet50");
        ASSERT_EQ(compiled.status, BenchmarkStatus::ok) << compiled.reason << "\n" << compiled.stderr_tail;
        EXPECT_GE(compiled.load_ns.value_or(0), 300'000'000) << "the fake's compile is load time";
        EXPECT_EQ(compiled.backend_version, "1.13.0");
        EXPECT_GE(metric(store, compiled.benchmark_id, load_metrics::kCompileSeconds).value_or(0), 0.3);
        EXPECT_EQ(metric(store, compiled.benchmark_id, load_metrics::kCompileCacheHit), 0.0);
        EXPECT_GE(store.iterations(compiled.benchmark_id).size(), 5u);
        EXPECT_THAT(compiled.stderr_tail, HasSubstr("compiled in"));

        const auto& skipped = find(benchmarks, "mobilenet");
        EXPECT_EQ(skipped.status, BenchmarkStatus::skipped);
        EXPECT_THAT(skipped.reason, HasSubstr("no torch._inductor.aoti_compile_and_package"));

        const auto& raised = find(benchmarks, "bert");
        EXPECT_EQ(raised.status, BenchmarkStatus::failed);
        EXPECT_EQ(raised.reason,
                  "model conversion failed: fake:raises: the factory raised RuntimeError: out of memory; fix the factory");
        EXPECT_THAT(raised.stderr_tail, AllOf(HasSubstr("traceback (last lines)"), HasSubstr("RuntimeError: out of memory")));

        const auto& foreign = find(benchmarks, "yolov3");
        EXPECT_EQ(foreign.status, BenchmarkStatus::failed);
        EXPECT_THAT(foreign.reason, AllOf(HasSubstr("compiled by PyTorch 2.10.0+cu130"), HasSubstr("LibTorch 1.13.0")));
    }
    EXPECT_THAT(dir.run("summary --db r.db --format csv").out, HasSubstr("load includes a 0."));

    const auto second = dir.run("run --model resnet50 --backend torch-aoti --batch 2 --duration 100ms --warmup 0s "
                                "--min-iterations 2 --set backend_options.torch-aoti.python=" +
                                    std::string(INFERBENCH_TEST_PYTHON) + " --db r.db",
                                fake_environment());
    ASSERT_EQ(second.exit_code, 0) << second.err;
    const auto store = store::ResultsStore::open(dir.file("r.db"));
    const auto& cached = store.benchmarks().back();
    EXPECT_EQ(cached.status, BenchmarkStatus::ok) << cached.reason;
    EXPECT_EQ(metric(store, cached.benchmark_id, load_metrics::kCompileCacheHit), 1.0);
    EXPECT_LT(cached.load_ns.value_or(0), 300'000'000);
    EXPECT_THAT(dir.run("summary --db r.db --format csv").out,
                HasSubstr("compiled file from the cache: its compile is not in the load time"));
}

TEST(AotiE2E, WithoutTheModuleListBackendsSaysWhatItNeeds) {
    testing::CliScratch dir;
    const auto listed = dir.run("list backends --json");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    bool found = false;
    const auto doc = nlohmann::json::parse(listed.out);
    for (const auto& row : doc["rows"]) {
        if (row.value("name", "") != "torch-aoti") continue;
        found = true;
        if (row.dump().find("not built") == std::string::npos) GTEST_SKIP() << "a real torch-aoti module is built here";
        EXPECT_THAT(row.dump(), AllOf(HasSubstr("LibTorch >= 2.6"), HasSubstr("scripts/setup.sh")));
    }
    EXPECT_TRUE(found) << listed.out;
}

}  // namespace
}  // namespace inferbench
