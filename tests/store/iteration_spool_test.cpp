// Iterations spooled to a temporary file and stored from it in chunks, numbered on from those in memory.
#include "store/iteration_spool.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "common/scratch_dir.hpp"
#include "store/results_store.hpp"

namespace inferbench::store {
namespace {

std::vector<IterationRecord> numbered(std::int64_t from, std::int64_t count) {
    std::vector<IterationRecord> records(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i) records[static_cast<std::size_t>(i)] = {from + i, 10 + from + i};
    return records;
}

TEST(IterationSpool, KeepsRecordsInOrderAndReadsThemBackInChunks) {
    IterationSpool spool;
    EXPECT_FALSE(spool.front().has_value());
    const std::int64_t total = static_cast<std::int64_t>(IterationSpool::kChunkRecords) * 2 + 5;
    spool.append(numbered(0, 7));
    spool.append(numbered(7, total - 7));
    EXPECT_EQ(spool.size(), total);
    EXPECT_EQ(spool.front()->start_ns, 0);
    EXPECT_EQ(spool.back()->start_ns, total - 1);
    std::vector<std::size_t> chunks;
    std::int64_t next = 0;
    spool.for_each_chunk([&](std::span<const IterationRecord> chunk) {
        chunks.push_back(chunk.size());
        for (const auto& record : chunk) ASSERT_EQ(record.start_ns, next++);
    });
    EXPECT_EQ(chunks, (std::vector<std::size_t>{IterationSpool::kChunkRecords, IterationSpool::kChunkRecords, 5}));
    EXPECT_EQ(spool.read_all().size(), static_cast<std::size_t>(total));
}

TEST(IterationSpool, StoredAfterTheIterationsInMemoryInOneBenchmark) {
    testing::ScratchDir dir;
    auto results = ResultsStore::open(dir.path() / "r.db");
    RunRecord run;
    run.plan_json = std::string{"{}"};
    run.environment_json = std::string{"{}"};
    BenchmarkRecord benchmark;
    benchmark.run_id = results.begin_run(run);
    benchmark.model = "null";
    benchmark.backend = "null";
    benchmark.device = "cpu";
    benchmark.precision = "fp32";
    benchmark.status = BenchmarkStatus::ok;
    benchmark.settings_json = "{}";
    const auto first = numbered(0, 3);
    IterationSpool spool;
    spool.append(numbered(3, 70'000));
    const auto id = results.add_benchmark(benchmark, BenchmarkData{.iterations = first, .spooled_iterations = &spool});
    const auto stored = results.iterations(id);
    ASSERT_EQ(stored.size(), 70'003u);
    for (std::size_t i = 0; i < stored.size(); ++i) ASSERT_EQ(stored[i].start_ns, static_cast<std::int64_t>(i));
}

}  // namespace
}  // namespace inferbench::store
