// `inferbench merge`'s store side (store/store_merge): every table of the schema copied with its ids remapped,
// merging again adds nothing, a newer record of a benchmark or run wins, a merge stopped midway leaves the target
// as it was, probes deduplicated by content, and sources refused before anything is read.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_merge.hpp"
#include "common/store_under_test.hpp"
#include "store_file_fixture.hpp"

namespace inferbench::store {
namespace {

std::string declared_type(ColumnType type) {
    switch (type) {
        case ColumnType::integer:
            return "INTEGER";
        case ColumnType::real:
            return "REAL";
        case ColumnType::text:
            return "TEXT";
    }
    return "";
}

// Every (table, column, declared type) of a store.
std::set<std::tuple<std::string, std::string, std::string>> schema_columns(const Database& db) {
    std::set<std::tuple<std::string, std::string, std::string>> columns;
    Statement tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    while (tables.step()) {
        const std::string table = tables.column_text(0);
        Statement info = db.prepare("SELECT name, type FROM pragma_table_info(?1)");
        info.bind_text(1, table);
        while (info.step()) columns.emplace(table, info.column_text(0), info.column_text(1));
    }
    return columns;
}

std::set<std::tuple<std::string, std::string, std::string>> merged_columns() {
    std::set<std::tuple<std::string, std::string, std::string>> columns;
    for (const MergedTable& table : merged_tables()) {
        const std::string name(table.name);
        if (!table.id.empty()) columns.emplace(name, std::string(table.id), "INTEGER");
        if (!table.parent.empty()) columns.emplace(name, std::string(table.parent), "INTEGER");
        for (const MergedColumn& column : table.columns)
            columns.emplace(name, std::string(column.name), declared_type(column.type));
    }
    return columns;
}

// A table's rows as text, without its own id and with its parent's id replaced by the parent's position among
// the store's parents (so that two stores holding the same data compare equal whatever their ids).
std::vector<std::string> table_rows(const Database& db, const MergedTable& table) {
    std::string columns;
    for (const MergedColumn& column : table.columns) columns += ", quote(" + std::string(column.name) + ")";
    std::string parent_order = "''";
    if (table.parent == "run_id") parent_order = "(SELECT run_uid FROM runs AS p WHERE p.run_id = t.run_id)";
    if (table.parent == "benchmark_id")
        parent_order =
            "(SELECT r.run_uid || ':' || b.ordinal || ':' || b.repeat_index || ':' || b.ended_unix_ms "
            "FROM benchmarks AS b JOIN runs AS r USING (run_id) WHERE b.benchmark_id = t.benchmark_id)";
    Statement select =
        db.prepare("SELECT " + parent_order + " AS p" + columns + " FROM " + std::string(table.name) + " AS t");
    std::vector<std::string> rows;
    while (select.step()) {
        std::string row;
        for (int i = 0; i < select.column_count(); ++i) row += select.column_text(i) + "|";
        rows.push_back(row);
    }
    std::sort(rows.begin(), rows.end());
    return rows;
}

// Every table's rows, by table name.
std::map<std::string, std::vector<std::string>> store_content(const std::filesystem::path& path) {
    Database db = Database::open(path, SQLITE_OPEN_READONLY);
    std::map<std::string, std::vector<std::string>> content;
    for (const MergedTable& table : merged_tables()) content[std::string(table.name)] = table_rows(db, table);
    return content;
}

std::string file_bytes(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

class StoreMergeTest : public StoreFileTest {
protected:
    std::filesystem::path path(const std::string& name) const { return scratch_.path() / name; }

    static RunRecord run_record(const std::string& name, const std::string& uid) {
        RunRecord run;
        run.name = name;
        run.started_unix_ms = 1'700'000'000'000;
        run.plan_json = "{}";
        run.environment_json = "{}";
        run.host = "node-1";
        run.uid = uid;
        run.shard = Shard{1, 2};
        return run;
    }

    static BenchmarkRecord cell(std::int64_t run_id, std::int64_t ordinal, std::int64_t ended_unix_ms,
                                BenchmarkStatus status = BenchmarkStatus::ok) {
        BenchmarkRecord b = benchmark(run_id);
        b.ordinal = ordinal;
        b.status = status;
        b.started_unix_ms = ended_unix_ms - 10;
        b.ended_unix_ms = ended_unix_ms;
        b.cpu_affinity = "0-3";
        b.concurrent = {{ordinal + 1, 0, "cuda:1"}};
        return b;
    }

    static std::vector<IterationRecord> iterations(std::int64_t count, std::int64_t base) {
        std::vector<IterationRecord> records;
        for (std::int64_t i = 0; i < count; ++i)
            records.push_back(
                {base + i * 100, 90 + i % 7, i % 3 == 0 ? kNotMeasured : 5, 6, 70, 7, i % 2 ? 3 : kNotMeasured});
        return records;
    }

    // A benchmark with a row in every table that hangs from benchmarks, and a probe: a source that exercises
    // every table of the schema.
    static void add_full_benchmark(ResultsStore& store, std::int64_t run_id, std::int64_t ordinal) {
        BenchmarkRecord b = cell(run_id, ordinal, 1'700'000'001'000 + ordinal);
        b.batch_size = 2;
        b.input_tokens = 8;
        b.output_tokens = 2;
        b.pipeline_stages = {{.iteration = 0, .stage = PipelineStage::decode, .start_ns = 10, .end_ns = 30,
                              .cpu_ns = 35, .images = 2},
                             {.iteration = 0, .stage = PipelineStage::infer, .start_ns = 30, .end_ns = 60, .images = 2}};
        const auto its = iterations(200, 1000 * ordinal);  // more than one multi-row INSERT, and a remainder
        const std::vector<Metric> metrics = {{"gpu_compute_mean_ms", 33.664, "ms"}, {"qps", 1e3 / 3, "1/s"}};
        const std::vector<Series> series = {{"gpu_latency_ms", {1.5, 1.25, 0.1}}};
        GpuSample gpu;
        gpu.t_ns = 5;
        gpu.power_w = 301.5;
        gpu.pstate = 2;
        gpu.clock_event_reasons = 4;
        CpuSample cpu;
        cpu.t_ns = 6;
        cpu.process_cpu_pct = 99.5;
        cpu.process_cpu_pct_per_core = {50, 49.5};
        const std::vector<GpuSample> gpus = {gpu, gpu};
        const std::vector<CpuSample> cpus = {cpu};
        const std::vector<TelemetrySource> sources = {{"nvml", "ok", ""}, {"rapl", "unavailable", "no permission"}};
        const std::vector<LayerTime> layers = {{"conv1", "Conv", "CPUExecutionProvider", 10, 12345, false}};
        const std::vector<GenerationRecord> generations = {{0, {{100, 4096}, {200, 8192}}}};
        const std::vector<std::int32_t> tokens = {11, 12, 13, 14};
        ServedRequest request;
        request.sent_ns = 10;
        request.end_ns = 50;
        request.chunks = {{20, 1}, {30, -1}};
        const std::vector<ServedRequest> requests = {request};
        const ServingWorkloadRecord workload{
            "fnv1a:1", "{}", {.ttft_ns = 5, .tpot_ns = 0, .e2e_ns = 0}, "http://127.0.0.1:1", "", "", "m"};
        store.add_benchmark(b, {.iterations = its,
                                .metrics = metrics,
                                .series = series,
                                .gpu_samples = gpus,
                                .cpu_samples = cpus,
                                .telemetry_sources = sources,
                                .layer_times = layers,
                                .generations = generations,
                                .generated_tokens = tokens,
                                .served_requests = requests,
                                .serving_workload = &workload});
        ProbeRecord probe{0, "cpu:test", "Test CPU", "", 1'700'000'000'500, "dram_copy", 12.5, "GB/s", "", "{}"};
        store.add_probe(probe);
    }

    // A shard: one run of `uid` with a full benchmark at ordinal 0 and a failed one at ordinal 1.
    void make_shard(const std::filesystem::path& file, const std::string& uid) {
        auto store = ResultsStore::open(file);
        const std::int64_t run = store.begin_run(run_record("shard " + uid.substr(0, 2), uid));
        add_full_benchmark(store, run, 0);
        store.add_benchmark(cell(run, 1, 1'700'000'002'000, BenchmarkStatus::failed), iterations(3, 0));
        store.end_run(run, 1'700'000'003'000, RunStatus::interrupted, "requeued");
    }

    std::vector<MergeCounts> merge(const std::filesystem::path& target,
                                   const std::vector<std::filesystem::path>& sources,
                                   const MergeOptions& options = {}) {
        std::vector<std::string> locations;
        for (const auto& source : sources) locations.push_back(source.string());
        auto into = ResultsStore::open(target);
        return merge_stores(into, locations, options);
    }

    static std::int64_t rows_of(const std::map<std::string, std::vector<std::string>>& content) {
        std::int64_t rows = 0;
        for (const auto& [table, table_rows] : content) rows += static_cast<std::int64_t>(table_rows.size());
        return rows;
    }

    const std::string uid_a_ = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    const std::string uid_b_ = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
};

// "table.column TYPE" of each entry of `a` that `b` lacks.
std::string missing(const std::set<std::tuple<std::string, std::string, std::string>>& a,
                    const std::set<std::tuple<std::string, std::string, std::string>>& b) {
    std::string text;
    for (const auto& [table, column, type] : a)
        if (!b.contains({table, column, type})) text += " " + table + "." + column + " " + type;
    return text;
}

TEST_F(StoreMergeTest, TheMergedTablesAreEveryTableAndColumnOfTheSchema) {
    // Read from SQLite's catalogue; PostgreSQL's tables come from the same migrations (store/sql_dialect).
    if (testing::testing_postgres()) GTEST_SKIP() << "the schema's columns are read from a SQLite file";
    auto store = ResultsStore::open(db_path_);
    const auto schema = schema_columns(store.database());
    const auto merged = merged_columns();
    EXPECT_EQ(missing(schema, merged), "") << "in the schema, not copied by the merge: add them to merged_tables.cpp";
    EXPECT_EQ(missing(merged, schema), "") << "copied by the merge, not in the schema (or of another type)";
}

TEST_F(StoreMergeTest, EveryTableIsCopiedWithItsIdsRemapped) {
    make_shard(path("a.db"), uid_a_);
    {
        auto target = ResultsStore::open(path("all.db"));  // ids taken already: the copies must get new ones
        const std::int64_t run = target.begin_run(run_record("local", "cccccccccccccccccccccccccccccccc"));
        target.add_benchmark(cell(run, 0, 1'600'000'000'000), iterations(5, 0));
        target.add_benchmark(cell(run, 1, 1'600'000'000'001), iterations(5, 0));
    }
    const auto before = store_content(path("all.db"));
    const auto source = store_content(path("a.db"));
    for (const auto& [table, rows] : source) EXPECT_FALSE(rows.empty()) << table << " has no row in the source";

    const auto counts = merge(path("all.db"), {path("a.db")});
    ASSERT_EQ(counts.size(), 1u);
    EXPECT_EQ(counts[0].runs_new, 1);
    EXPECT_EQ(counts[0].benchmarks_added, 2);
    EXPECT_EQ(counts[0].probes_added, 1);
    EXPECT_EQ(counts[0].rows_copied, rows_of(source));
    EXPECT_TRUE(counts[0].running.empty());

    const auto after = store_content(path("all.db"));
    for (const auto& [table, rows] : source) {
        std::vector<std::string> expected = before.at(table);
        expected.insert(expected.end(), rows.begin(), rows.end());
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(after.at(table), expected) << table;
    }
    // Read back through the store as a report would: the copied run with its benchmarks under it.
    auto merged = ResultsStore::open(path("all.db"), ResultsStore::Access::read);
    const auto runs = merged.runs();
    ASSERT_EQ(runs.size(), 2u);
    EXPECT_EQ(runs[1].uid, uid_a_);
    EXPECT_EQ(runs[1].status, RunStatus::interrupted);
    EXPECT_EQ(runs[1].end_reason, "requeued");
    const auto benchmarks = merged.benchmarks(runs[1].run_id);
    ASSERT_EQ(benchmarks.size(), 2u);
    EXPECT_EQ(merged.iterations(benchmarks[0].benchmark_id).size(), 200u);
    EXPECT_EQ(merged.served_requests(benchmarks[0].benchmark_id).at(0).chunks.size(), 2u);
    EXPECT_NE(benchmarks[0].benchmark_id, 1);
}

TEST_F(StoreMergeTest, MergingTheSameStoresAgainAddsNothing) {
    make_shard(path("a.db"), uid_a_);
    make_shard(path("b.db"), uid_b_);
    merge(path("all.db"), {path("a.db"), path("b.db")});
    const auto once = store_content(path("all.db"));
    const auto again = merge(path("all.db"), {path("a.db"), path("b.db"), path("a.db")});
    for (const MergeCounts& counts : again) {
        EXPECT_EQ(counts.runs_new + counts.runs_updated, 0);
        EXPECT_EQ(counts.runs_unchanged, 1);
        EXPECT_EQ(counts.benchmarks_added + counts.benchmarks_replaced + counts.probes_added, 0);
        EXPECT_EQ(counts.rows_copied, 0);
    }
    EXPECT_EQ(store_content(path("all.db")), once);
    EXPECT_EQ(once.at("runs").size(), 2u);
    EXPECT_EQ(once.at("device_probes").size(), 1u) << "the same probe in both shards is stored once";
}

TEST_F(StoreMergeTest, AShardThatWentOnBringsItsNewerBenchmarksAndRunEnd) {
    make_shard(path("a.db"), uid_a_);
    std::filesystem::copy_file(path("a.db"), path("a-before.db"));
    merge(path("all.db"), {path("a.db")});
    {  // the shard requeued: its failed cell measured again, one more cell, the run completed
        auto shard = ResultsStore::open(path("a.db"));
        const std::int64_t run = shard.runs().at(0).run_id;
        ASSERT_FALSE(shard.reopen_run(run, current_process_identity()));
        shard.replace_benchmark(cell(run, 1, 1'700'000'004'000), {.iterations = iterations(7, 0)});
        shard.add_benchmark(cell(run, 2, 1'700'000'005'000), iterations(4, 0));
        shard.end_run(run, 1'700'000'006'000, RunStatus::completed);
    }
    const auto counts = merge(path("all.db"), {path("a.db")});
    EXPECT_EQ(counts[0].runs_updated, 1);
    EXPECT_EQ(counts[0].benchmarks_added, 1);
    EXPECT_EQ(counts[0].benchmarks_replaced, 1);
    EXPECT_EQ(counts[0].rows_copied, 2 + 7 + 4);

    auto check = [&] {
        auto merged = ResultsStore::open(path("all.db"), ResultsStore::Access::read);
        const auto run = merged.runs().at(0);
        EXPECT_EQ(run.status, RunStatus::completed);
        EXPECT_EQ(run.ended_unix_ms, 1'700'000'006'000);
        EXPECT_TRUE(run.end_reason.empty());
        const auto benchmarks = merged.benchmarks(run.run_id);
        ASSERT_EQ(benchmarks.size(), 3u);
        EXPECT_EQ(benchmarks[1].status, BenchmarkStatus::ok);
        EXPECT_EQ(merged.iterations(benchmarks[1].benchmark_id).size(), 7u) << "the older record's rows are gone";
    };
    check();
    // The shard's older copy merged after the newer one changes nothing.
    const auto older = merge(path("all.db"), {path("a-before.db")});
    EXPECT_EQ(older[0].runs_unchanged, 1);
    EXPECT_EQ(older[0].rows_copied, 0);
    check();
}

TEST_F(StoreMergeTest, AMergeStoppedMidwayLeavesTheTargetAsItWas) {
    make_shard(path("a.db"), uid_a_);
    make_shard(path("b.db"), uid_b_);
    merge(path("all.db"), {path("a.db")});
    const auto before = store_content(path("all.db"));
    int asked = 0;
    EXPECT_THROW(merge(path("all.db"), {path("b.db")}, {.stop = [&] { return ++asked == 2; }}), MergeStopped);
    EXPECT_EQ(asked, 2) << "stopped after the first benchmark of b.db was written";
    EXPECT_EQ(store_content(path("all.db")), before);
    // Any error midway does the same.
    EXPECT_THROW(
        merge(path("all.db"), {path("b.db")}, {.stop = [&]() -> bool { throw EnvironmentError("disk gone"); }}),
        EnvironmentError);
    EXPECT_EQ(store_content(path("all.db")), before);
}

TEST_F(StoreMergeTest, ARunStillBeingWrittenIsMergedAsItIsAndSaidSo) {
    {
        auto shard = ResultsStore::open(path("a.db"));
        RunRecord run = run_record("live", uid_a_);
        run.orchestrator = current_process_identity();
        const std::int64_t id = shard.begin_run(run);
        shard.add_benchmark(cell(id, 0, 1'700'000'001'000), iterations(3, 0));
    }
    const auto counts = merge(path("all.db"), {path("a.db")});
    ASSERT_EQ(counts[0].running.size(), 1u);
    EXPECT_NE(counts[0].running[0].find("'live'"), std::string::npos) << counts[0].running[0];
    EXPECT_EQ(counts[0].benchmarks_added, 1);
    {  // it goes on and ends: merging again brings the rest and its end
        auto shard = ResultsStore::open(path("a.db"));
        const std::int64_t id = shard.runs().at(0).run_id;
        shard.add_benchmark(cell(id, 1, 1'700'000'002'000), iterations(3, 0));
        shard.end_run(id, 1'700'000'003'000, RunStatus::completed);
    }
    const auto later = merge(path("all.db"), {path("a.db")});
    EXPECT_TRUE(later[0].running.empty());
    EXPECT_EQ(later[0].runs_updated, 1);
    EXPECT_EQ(later[0].benchmarks_added, 1);
    auto merged = ResultsStore::open(path("all.db"), ResultsStore::Access::read);
    EXPECT_EQ(merged.runs().at(0).status, RunStatus::completed);
}

TEST_F(StoreMergeTest, SourcesThatAreNotStoresOfThisSchemaAreRefusedUnchanged) {
    auto refused = [&](const std::filesystem::path& file) {
        const std::string bytes = file_bytes(file);
        EXPECT_THROW(open_merge_source(file.string()), EnvironmentError) << file;
        EXPECT_EQ(file_bytes(file), bytes) << file << " was changed";
    };
    std::ofstream(path("text.db")) << "not a database at all\n";
    refused(path("text.db"));
    {
        Database other = Database::open(path("other.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        other.exec("CREATE TABLE t (x INTEGER)");
    }
    refused(path("other.db"));
    make_shard(path("old.db"), uid_a_);
    {
        Database db = Database::open(path("old.db"), SQLITE_OPEN_READWRITE);
        db.exec(kBackToSchema11);
    }
    refused(path("old.db"));
    make_shard(path("new.db"), uid_b_);
    {
        Database db = Database::open(path("new.db"), SQLITE_OPEN_READWRITE);
        db.exec("PRAGMA user_version = " + std::to_string(known_schema_version() + 1));
    }
    refused(path("new.db"));
    EXPECT_THROW(open_merge_source(path("missing.db").string()), EnvironmentError);
    EXPECT_FALSE(std::filesystem::exists(path("missing.db")));
}

TEST_F(StoreMergeTest, SameStoreSeesThroughPathSpellings) {
    make_shard(path("a.db"), uid_a_);
    std::filesystem::create_symlink(path("a.db"), path("link.db"));
    EXPECT_TRUE(same_store(path("a.db").string(), path("link.db").string()));
    EXPECT_TRUE(same_store(path("a.db").string(), (scratch_.path() / "." / "a.db").string()));
    EXPECT_TRUE(same_store(path("new.db").string(), (scratch_.path() / "x" / ".." / "new.db").string()));
    EXPECT_FALSE(same_store(path("a.db").string(), path("b.db").string()));
}

}  // namespace
}  // namespace inferbench::store
