// A results store (a file in a scratch directory, or a fresh PostgreSQL database where the binary runs with
// INFERBENCH_TEST_STORE=postgres: common/store_under_test.hpp), with a run and a benchmark row to hang things on.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "common/scratch_dir.hpp"
#include "common/store_under_test.hpp"
#include "store/results_store.hpp"

namespace inferbench::store {

// SQL that takes a current file back to schema 12 (before pipeline stages), 11 (before run identities, shards and concurrent benchmarks),
// 10 (before serving cells), 9 (before generative benchmarks),
// 8 (before iterations had a queue time), 7 (before
// benchmarks had repeats and convergence), 6 (before layer times said whether they are the host's
// dispatch) and 5 (before the orchestrator columns of runs), for tests that make an older file out of a
// new one.
inline const std::string kBackToSchema12 = "DROP TABLE pipeline_stages; PRAGMA user_version = 12; ";
inline const std::string kBackToSchema11 =
    kBackToSchema12 + "DROP INDEX runs_by_uid; ALTER TABLE runs DROP COLUMN run_uid; ALTER TABLE runs DROP COLUMN shard_count; "
    "ALTER TABLE runs DROP COLUMN shard_index; ALTER TABLE benchmarks DROP COLUMN cpu_affinity; "
    "ALTER TABLE benchmarks DROP COLUMN concurrent_json; PRAGMA user_version = 11; ";
inline const std::string kBackToSchema10 =
    kBackToSchema11 + "DROP TABLE serving_workloads; DROP TABLE serving_chunks; DROP TABLE serving_requests; PRAGMA user_version = 10; ";
inline const std::string kBackToSchema9 =
    kBackToSchema10 + "DROP TABLE generated_tokens; DROP TABLE generation_steps; ALTER TABLE benchmarks DROP COLUMN input_tokens; "
    "ALTER TABLE benchmarks DROP COLUMN output_tokens; PRAGMA user_version = 9; ";
inline const std::string kBackToSchema8 =
    kBackToSchema9 + "ALTER TABLE iterations DROP COLUMN queue_ns; PRAGMA user_version = 8; ";
inline const std::string kBackToSchema7 =
    kBackToSchema8 +
    "ALTER TABLE benchmarks DROP COLUMN repeat_index; ALTER TABLE benchmarks DROP COLUMN convergence; "
    "ALTER TABLE benchmarks DROP COLUMN stop_reason; PRAGMA user_version = 7; ";
inline const std::string kBackToSchema6 =
    kBackToSchema7 + "ALTER TABLE layer_times DROP COLUMN host_dispatch; PRAGMA user_version = 6; ";
inline const std::string kBackToSchema5 =
    kBackToSchema6 +
    "ALTER TABLE runs DROP COLUMN orchestrator_pid; ALTER TABLE runs DROP COLUMN orchestrator_start_ticks; "
    "ALTER TABLE runs DROP COLUMN orchestrator_boot_id; ALTER TABLE runs DROP COLUMN orchestrator_pid_namespace; "
    "ALTER TABLE runs DROP COLUMN end_reason; PRAGMA user_version = 5; ";

class StoreFileTest : public ::testing::Test {
protected:
    static std::int64_t add_run(ResultsStore& store, const std::string& name = "test") {
        RunRecord run;
        run.name = name;
        run.started_unix_ms = 1'700'000'000'000;
        run.plan_json = "{}";
        run.environment_json = "{}";
        return store.begin_run(run);
    }

    static BenchmarkRecord benchmark(std::int64_t run_id, const std::string& backend = "torch") {
        BenchmarkRecord b;
        b.run_id = run_id;
        b.model = "resnet50";
        b.backend = backend;
        b.device = "cuda:0";
        b.precision = "fp16";
        b.status = BenchmarkStatus::ok;
        b.settings_json = "{}";
        return b;
    }

    // The store's own connection, for a test's SQL (either dialect).
    Database open_database() const { return testing::open_store_database(db_path_); }
    static bool on_postgres() { return testing::testing_postgres(); }

    testing::ScratchDir scratch_;
    std::filesystem::path db_path_ = testing::store_under_test(scratch_.path() / "results.db");
};

}  // namespace inferbench::store
