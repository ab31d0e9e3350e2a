// Serving cells (schema step 11): every request with its chunks, and the workload with its SLOs, stored in the
// benchmark's transaction and read back as given; unknown values as NULL; other benchmarks have none; a file
// from before gains the tables; 100 000 chunks store in batches.
#include <gtest/gtest.h>

#include <chrono>

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store_file_fixture.hpp"

namespace inferbench::store {
namespace {

using ServingStoreTest = StoreFileTest;

ServedRequest ok_request(std::int64_t index, std::int64_t at, std::size_t chunks) {
    ServedRequest r;
    r.index = index;
    r.scheduled_ns = at;
    r.sent_ns = at + 5;
    for (std::size_t c = 0; c < chunks; ++c)
        r.chunks.push_back({at + 100 + static_cast<std::int64_t>(c) * 10, c == 1 ? 3 : 1});
    r.end_ns = at + 100 + static_cast<std::int64_t>(chunks) * 10;
    r.input_tokens = 32;
    r.output_tokens = static_cast<std::int64_t>(chunks) + 2;
    r.cached_tokens = 16;
    r.finish_reason = "length";
    r.server_prompt_ms = 1.5;
    r.server_generation_ms = 7.25;
    return r;
}

std::vector<ServedRequest> cell() {
    ServedRequest warm = ok_request(0, 0, 2);
    warm.warmup = true;
    ServedRequest failed;
    failed.index = 2;
    failed.scheduled_ns = 300;
    failed.sent_ns = 300;
    failed.end_ns = 310;
    failed.outcome = RequestOutcome::http_status;
    failed.http_status = 503;
    failed.error = "Service Unavailable";
    ServedRequest unknown = ok_request(3, 400, 2);  // nothing reported, a chunk of unknown tokens
    unknown.input_tokens = unknown.output_tokens = unknown.cached_tokens = -1;
    unknown.finish_reason.clear();
    unknown.server_prompt_ms = unknown.server_generation_ms = -1;
    unknown.chunks[1].tokens = -1;
    return {warm, ok_request(1, 100, 4), failed, unknown, ok_request(0, 500, 0)};  // index 0 again: keyed by order
}

TEST_F(ServingStoreTest, RequestsChunksAndWorkloadRoundTrip) {
    auto store = ResultsStore::open(db_path_);
    const auto requests = cell();
    const ServingWorkloadRecord workload{"fnv1a:0123",
                                         R"({"requests":[{"index":0}]})",
                                         {.ttft_ns = 2'000'000, .tpot_ns = 0, .e2e_ns = 9'000'000},
                                         "http://127.0.0.1:8080",
                                         "llama-server -m 'model.gguf' --port 8080",
                                         "llama.cpp b1-5b4ebc5",
                                         "llama-tiny"};
    const std::int64_t id =
        store.add_benchmark(benchmark(add_run(store, "serving"), "openai"),
                            BenchmarkData{.served_requests = requests, .serving_workload = &workload});
    EXPECT_EQ(store.served_requests(id), requests);
    EXPECT_EQ(store.serving_workload(id), workload);
    std::vector<std::int64_t> streamed;
    store.for_each_served_request(id, [&](ServedRequest&& r) { streamed.push_back(r.index); });
    EXPECT_EQ(streamed, (std::vector<std::int64_t>{0, 1, 2, 3, 0}));
}

TEST_F(ServingStoreTest, AServerNotStartedNorNamedIsNull) {
    auto store = ResultsStore::open(db_path_);
    const ServingWorkloadRecord workload{"f", "{}", {}, "http://10.0.0.5:8000", "", "", "served-model"};
    const std::int64_t id = store.add_benchmark(benchmark(add_run(store, "serving"), "openai"),
                                                BenchmarkData{.serving_workload = &workload});
    EXPECT_EQ(store.serving_workload(id), workload);
    Database db = open_database();
    Statement row = db.prepare("SELECT server_command, server_version FROM serving_workloads");
    ASSERT_TRUE(row.step());
    EXPECT_TRUE(row.column_is_null(0));
    EXPECT_TRUE(row.column_is_null(1));
}

TEST_F(ServingStoreTest, UnknownValuesAreNullAndOutcomesAreWords) {
    auto store = ResultsStore::open(db_path_);
    const auto requests = cell();
    store.add_benchmark(benchmark(add_run(store, "serving"), "openai"), BenchmarkData{.served_requests = requests});
    Database db = open_database();
    Statement row = db.prepare(
        "SELECT outcome, http_status, error, output_tokens, finish_reason, server_prompt_ms FROM serving_requests "
        "WHERE seq = 3");
    ASSERT_TRUE(row.step());
    EXPECT_EQ(row.column_text(0), "ok");
    for (int column = 1; column < 6; ++column) EXPECT_TRUE(row.column_is_null(column)) << column;
    Statement failed = db.prepare("SELECT outcome, http_status FROM serving_requests WHERE seq = 2");
    ASSERT_TRUE(failed.step());
    EXPECT_EQ(failed.column_text(0), "http_status");
    EXPECT_EQ(failed.column_int64(1), 503);
    Statement chunk = db.prepare("SELECT tokens FROM serving_chunks WHERE seq = 3 AND chunk = 1");
    ASSERT_TRUE(chunk.step());
    EXPECT_TRUE(chunk.column_is_null(0));
}

TEST_F(ServingStoreTest, AnOutcomeNoInferbenchWritesIsRefusedByTheFile) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t id =
        store.add_benchmark(benchmark(add_run(store, "serving"), "openai"), std::vector<IterationRecord>{});
    Database db = open_database();
    EXPECT_THROW(testing::exec_in_dialect(db, "INSERT INTO serving_requests (benchmark_id, seq, request, warmup, scheduled_ns, sent_ns, "
                         "end_ns, outcome) VALUES (" +
                         std::to_string(id) + ", 0, 0, 0, 1, 1, 2, 'lost')"),
                 DatabaseError);
}

TEST_F(ServingStoreTest, OtherBenchmarksHaveNone) {
    auto store = ResultsStore::open(db_path_);
    const std::int64_t id =
        store.add_benchmark(benchmark(add_run(store, "serving")), std::vector<IterationRecord>{{5, 6}});
    EXPECT_TRUE(store.served_requests(id).empty());
    EXPECT_FALSE(store.serving_workload(id));
}

TEST_F(ServingStoreTest, ReplacingABenchmarkRemovesItsRequests) {
    auto store = ResultsStore::open(db_path_);
    const auto run = add_run(store, "serving");
    const auto requests = cell();
    store.add_benchmark(benchmark(run, "openai"), BenchmarkData{.served_requests = requests});
    const std::int64_t id = store.replace_benchmark(benchmark(run, "openai"),
                                                    BenchmarkData{.served_requests = std::span(requests).first(1)});
    EXPECT_EQ(store.served_requests(id), std::vector<ServedRequest>(requests.begin(), requests.begin() + 1));
    Database db = open_database();
    Statement count = db.prepare("SELECT count(*) FROM serving_chunks");
    ASSERT_TRUE(count.step());
    EXPECT_EQ(count.column_int64(0), 2);
}

TEST_F(ServingStoreTest, AHundredThousandChunksStoreInBatches) {
    std::vector<ServedRequest> requests;
    for (std::int64_t i = 0; i < 1001; ++i) requests.push_back(ok_request(i, i * 1000, 100));  // 100 100 chunks
    auto store = ResultsStore::open(db_path_);
    const auto run = add_run(store, "serving");
    const auto begun = std::chrono::steady_clock::now();
    const std::int64_t id = store.add_benchmark(benchmark(run, "openai"), BenchmarkData{.served_requests = requests});
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
    EXPECT_EQ(store.served_requests(id), requests);
    // Row by row this takes several seconds on a busy 2-core machine; in batches well under one.
    EXPECT_LT(seconds, 5.0);
    RecordProperty("store_seconds", std::to_string(seconds));
}

TEST_F(ServingStoreTest, AVersionTenFileGainsTheTablesAndKeepsItsBenchmarks) {
    std::int64_t id = 0;
    {
        auto store = ResultsStore::open(db_path_);
        id = store.add_benchmark(benchmark(add_run(store, "serving")), std::vector<IterationRecord>{{5, 6}});
        Database db = open_database();
        testing::exec_in_dialect(db, kBackToSchema10);
        EXPECT_EQ(schema_version(db), 10);
    }
    auto store = ResultsStore::open(db_path_);
    EXPECT_EQ(store.schema_version(), known_schema_version());
    EXPECT_EQ(store.iterations(id).size(), 1u);
    EXPECT_TRUE(store.served_requests(id).empty());
    const auto requests = cell();
    const std::int64_t added = store.add_benchmark(benchmark(store.benchmarks()[0].run_id, "openai"),
                                                   BenchmarkData{.served_requests = requests});
    EXPECT_EQ(store.served_requests(added), requests);
}

}  // namespace
}  // namespace inferbench::store
