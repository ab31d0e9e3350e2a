// The recovery file: a results file elsewhere that holds what a failed store could not take.
#include "store/recovery_file.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

class RecoveryFileTest : public StoreFileTest {};

TEST_F(RecoveryFileTest, HoldsTheRunAndEveryMeasuredBenchmark) {
    RunRecord run;
    run.name = "nightly";
    run.started_unix_ms = 1'700'000'000'000;
    run.plan_json = "{\"models\":[\"resnet50\"]}";
    run.environment_json = "{}";
    MeasuredBenchmark measured{benchmark(7), std::vector<IterationRecord>(1000, IterationRecord{1, 2, 3, 4, 5, 6}),
                               {{"model_parameters", 25e6, "count"}}, {}, {}, {}, {}};
    ::setenv("TMPDIR", scratch_.path().c_str(), 1);
    const RecoveryFile file = write_recovery_file("/full/disk/results.db", run, std::span(&measured, 1));
    ::unsetenv("TMPDIR");
    ASSERT_EQ(file.error, "");
    EXPECT_EQ(file.path.parent_path(), scratch_.path());
    EXPECT_TRUE(file.path.filename().string().starts_with("inferbench-recovery-results-")) << file.path;

    ResultsStore kept = ResultsStore::open(file.path, ResultsStore::Access::read);
    ASSERT_EQ(kept.runs().size(), 1u);
    EXPECT_EQ(kept.runs()[0].status, RunStatus::failed);
    EXPECT_EQ(kept.runs()[0].plan_json, run.plan_json);
    const auto benchmarks = kept.benchmarks();
    ASSERT_EQ(benchmarks.size(), 1u);
    EXPECT_EQ(benchmarks[0].run_id, kept.runs()[0].run_id);
    EXPECT_EQ(benchmarks[0].model, "resnet50");
    EXPECT_EQ(kept.iterations(benchmarks[0].benchmark_id).size(), 1000u);
    EXPECT_EQ(kept.metrics(benchmarks[0].benchmark_id).size(), 1u);
}

TEST_F(RecoveryFileTest, TriesTheNextFolderWhenOneRefuses) {
    ::setenv("TMPDIR", (scratch_.path() / "not-a-folder" / "x").c_str(), 1);
    std::ofstream(scratch_.path() / "not-a-folder") << "a file where a folder would be";
    const char* home = std::getenv("HOME");
    const std::string saved_home = home != nullptr ? home : "";
    ::setenv("HOME", scratch_.path().c_str(), 1);
    const auto folders = recovery_folders();
    ASSERT_GE(folders.size(), 2u);
    EXPECT_EQ(folders[1], scratch_.path());
    RunRecord run;
    run.plan_json = run.environment_json = "{}";
    const MeasuredBenchmark measured{benchmark(1), {}, {}, {}, {}, {}, {}};
    const RecoveryFile file = write_recovery_file("r.db", run, std::span(&measured, 1));
    ::unsetenv("TMPDIR");
    ::setenv("HOME", saved_home.c_str(), 1);
    EXPECT_EQ(file.path.parent_path(), scratch_.path());
    EXPECT_TRUE(std::filesystem::exists(file.path));
}

}  // namespace
}  // namespace inferbench::store
