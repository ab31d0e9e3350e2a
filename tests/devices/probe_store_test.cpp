// Probes in the results database: schema step 4, the round trip, the filter by device, the unit check,
// and a version-3 file migrating with its rows kept.
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_file_fixture.hpp"

namespace inferbench::store {
namespace {

ProbeRecord probe(const std::string& key, const std::string& name, double value, const std::string& unit,
                  std::int64_t at) {
    return {0,
            key,
            "NVIDIA H200",
            key.starts_with("cpu:") ? "" : "GPU-abc",
            at,
            name,
            value,
            unit,
            unit == "GB/s" ? "" : "bf16",
            R"({"dense":true})"};
}

TEST(ProbeStore, RoundTripInMeasurementOrder) {
    testing::ScratchDir scratch;
    auto store = ResultsStore::open(scratch.path() / "r.db");
    EXPECT_GE(store.schema_version(), 4);
    const std::vector<ProbeRecord> records = {probe("h200-sxm", "gemm_bf16", 812.5, "TFLOP/s", 2000),
                                              probe("h200-sxm", "dram_copy", 4180, "GB/s", 1000),
                                              probe("cpu:AMD EPYC", "fma_fp32", 0.16, "TFLOP/s", 1500)};
    const auto ids = store.add_probes(records);
    ASSERT_EQ(ids.size(), 3u);
    const auto all = store.probes();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].name, "dram_copy");  // oldest first
    EXPECT_EQ(all[0].precision, "");      // NULL reads back empty
    EXPECT_EQ(all[1].device_key, "cpu:AMD EPYC");
    EXPECT_EQ(all[1].uuid, "");
    EXPECT_EQ(all[2].probe_id, ids[0]);
    EXPECT_DOUBLE_EQ(all[2].value, 812.5);
    EXPECT_EQ(all[2].unit, "TFLOP/s");
    EXPECT_EQ(all[2].uuid, "GPU-abc");
    EXPECT_EQ(all[2].details_json, R"({"dense":true})");
    const auto h200 = store.probes("h200-sxm");
    ASSERT_EQ(h200.size(), 2u);
    EXPECT_EQ(store.probes("none").size(), 0u);
    EXPECT_GT(store.add_probe(probe("h200-sxm", "l2_read", 9000, "GB/s", 3000)), ids.back());
}

TEST(ProbeStore, AnUnknownUnitIsRefusedAndNothingOfTheBatchIsKept) {
    testing::ScratchDir scratch;
    auto store = ResultsStore::open(scratch.path() / "r.db");
    const std::vector<ProbeRecord> records = {probe("k", "gemm_bf16", 1, "TFLOP/s", 1),
                                              probe("k", "x", 1, "TFLOPS", 2)};
    EXPECT_THROW(store.add_probes(records), EnvironmentError);
    EXPECT_TRUE(store.probes().empty());
}

TEST(ProbeStore, AVersionThreeFileGainsTheTableAndKeepsItsRuns) {
    testing::ScratchDir scratch;
    const auto path = scratch.path() / "r.db";
    {
        auto store = ResultsStore::open(path);
        RunRecord run;
        run.name = "old";
        run.plan_json = run.environment_json = "{}";
        store.begin_run(run);
        Database db = Database::open(path, SQLITE_OPEN_READWRITE);
        db.exec(std::string(kBackToSchema5) + "DROP TABLE device_probes; DROP TABLE layer_times; PRAGMA user_version = 3");
    }
    auto store = ResultsStore::open(path);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    EXPECT_EQ(store.runs().size(), 1u);
    store.add_probe(probe("h200-sxm", "gemm_fp8", 1400, "TFLOP/s", 1));
    EXPECT_EQ(store.probes().size(), 1u);
}

}  // namespace
}  // namespace inferbench::store
