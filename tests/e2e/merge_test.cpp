// `inferbench merge A.db B.db --into all.db` through the real CLI: two runs of the null backend merged and shown by
// `summary`, merging again adds nothing, refusals give one line and a non-zero exit and change no file, and a merge
// stopped by Ctrl-C or killed leaves the target as it was.
#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "e2e/background_cli.hpp"
#include "store/results_store.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "store/store_merge.hpp"

namespace inferbench {
namespace {

using testing::BackgroundCli;
using testing::CliScratch;
using ::testing::HasSubstr;
using testing::unique_tag;
using testing::wait_until;
using namespace std::chrono_literals;

std::string bytes_of(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

// A CSV line's fields (quoted fields kept with their quotes; no newline inside one here).
std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> fields(1);
    bool quoted = false;
    for (const char c : line) {
        if (c == '"') quoted = !quoted;
        if (c == ',' && !quoted)
            fields.emplace_back();
        else
            fields.back() += c;
    }
    return fields;
}

// A summary's CSV without the ids a merge renumbers (benchmark_ids, run_id).
std::string without_ids(const std::string& csv) {
    std::istringstream lines(csv);
    std::string header;
    std::getline(lines, header);
    const auto names = csv_fields(header);
    auto kept = [&](const std::string& line) {
        const auto fields = csv_fields(line);
        std::string text;
        for (std::size_t i = 0; i < fields.size() && i < names.size(); ++i)
            if (names[i] != "benchmark_ids" && names[i] != "run_id") text += fields[i] + ",";
        return text + "\n";
    };
    std::string out = kept(header);
    for (std::string line; std::getline(lines, line);) out += kept(line);
    return out;
}

void null_run(const CliScratch& dir, const std::string& db, const std::string& batch) {
    const auto ran = dir.run("run --backend null --model null --batch " + batch + " --duration 10ms --warmup 0s --db " +
                             db + " --quiet");
    ASSERT_EQ(ran.exit_code, 0) << ran.err;
}

// Runs and iterations of a store, read as a report reads them.
std::pair<std::size_t, std::size_t> runs_and_iterations(const std::string& file) {
    auto store = store::ResultsStore::open(file, store::ResultsStore::Access::read);
    std::size_t iterations = 0;
    for (const auto& benchmark : store.benchmarks())
        iterations += static_cast<std::size_t>(store.iteration_count(benchmark.benchmark_id));
    return {store.runs().size(), iterations};
}

TEST(Merge, TwoRunsMergedShowInSummaryAndMergingAgainAddsNothing) {
    CliScratch dir;
    null_run(dir, "a.db", "1");
    null_run(dir, "b.db", "2");
    const auto merged = dir.run("merge a.db b.db --into all.db");
    ASSERT_EQ(merged.exit_code, 0) << merged.err;
    EXPECT_THAT(merged.out, ::testing::ContainsRegex("a.db +1 +0 +0 +1 +0 +0 +[1-9][0-9]*\n"));
    EXPECT_THAT(merged.out, ::testing::ContainsRegex("b.db +1 +0 +0 +1 +0 +0 +[1-9][0-9]*\n"));
    EXPECT_THAT(merged.out, ::testing::ContainsRegex("total +2 +0 +0 +2 +0 +0 +[1-9][0-9]*\n"));
    EXPECT_THAT(merged.out, HasSubstr("merged 2 stores into all.db"));

    const auto listed = dir.run("summary --db all.db --runs");
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    // The merged runs read as their shards' (the benchmark ids aside, renumbered in all.db).
    const auto first = dir.run("summary --db all.db --run 1 --format csv");
    const auto second = dir.run("summary --db all.db --run 2 --format csv");
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    EXPECT_THAT(first.out, HasSubstr(",null,null,cpu,fp32,1,"));
    EXPECT_THAT(second.out, HasSubstr(",null,null,cpu,fp32,2,"));
    EXPECT_EQ(without_ids(first.out), without_ids(dir.run("summary --db a.db --run 1 --format csv").out));
    EXPECT_EQ(without_ids(second.out), without_ids(dir.run("summary --db b.db --run 1 --format csv").out));
    const auto before = runs_and_iterations(dir.file("all.db"));
    EXPECT_EQ(before.first, 2u);

    const auto again = dir.run("merge a.db b.db --into all.db --format csv");
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_EQ(
        again.out,
        "store,runs_new,runs_updated,runs_unchanged,benchmarks_added,benchmarks_replaced,probes_added,rows_copied\n"
        "a.db,0,0,1,0,0,0,0\nb.db,0,0,1,0,0,0,0\ntotal,0,0,2,0,0,0,0\n");
    EXPECT_EQ(runs_and_iterations(dir.file("all.db")), before);
}

TEST(Merge, RefusalsGiveOneLineAndChangeNothing) {
    CliScratch dir;
    null_run(dir, "a.db", "1");
    null_run(dir, "all.db", "2");
    std::ofstream(dir.file("text.db")) << "not a database\n";
    {
        auto other = store::Database::open(dir.file("other.db"), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
        other.exec("CREATE TABLE accounts (id INTEGER)");
    }
    null_run(dir, "old.db", "1");
    null_run(dir, "newer.db", "1");
    {
        auto old = store::Database::open(dir.file("old.db"), SQLITE_OPEN_READWRITE);
        old.exec("DROP INDEX runs_by_uid; ALTER TABLE runs DROP COLUMN run_uid; PRAGMA user_version = 11");
        auto newer = store::Database::open(dir.file("newer.db"), SQLITE_OPEN_READWRITE);
        newer.exec("PRAGMA user_version = " + std::to_string(store::known_schema_version() + 1));
    }
    const std::vector<std::string> files = {"a.db", "all.db", "text.db", "other.db", "old.db", "newer.db"};
    std::map<std::string, std::string> bytes;
    for (const auto& file : files) bytes[file] = bytes_of(dir.file(file));

    const std::vector<std::pair<std::string, std::string>> refusals = {
        {"merge a.db missing.db --into all.db", "source 'missing.db' is not a file"},
        {"merge a.db text.db --into all.db", "cannot read source 'text.db'"},
        {"merge a.db other.db --into all.db", "'other.db' is not an inferbench results store"},
        {"merge old.db --into all.db", "has schema version 11"},
        {"merge newer.db --into all.db", "this inferbench knows up to"},
        {"merge a.db ./all.db --into all.db", "'./all.db' is both a source and the target"},
        {"merge a.db --into newer.db", "cannot write target 'newer.db'"},
        {"merge a.db --into other.db", "cannot write target 'other.db'"},
        {"merge a.db --into fresh.db other.db", "'other.db' is not an inferbench results store"},
    };
    for (const auto& [args, expected] : refusals) {
        const auto refused = dir.run(args);
        EXPECT_NE(refused.exit_code, 0) << args;
        EXPECT_THAT(refused.err, HasSubstr(expected)) << args;
        EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << args << ": " << refused.err;
        EXPECT_TRUE(refused.out.empty()) << args << ": " << refused.out;
        for (const auto& file : files) EXPECT_EQ(bytes_of(dir.file(file)), bytes[file]) << args << " changed " << file;
        EXPECT_FALSE(std::filesystem::exists(dir.file("fresh.db"))) << args;
    }
}

// A source large enough that the merge is still writing when the signal comes: it then leaves all.db as it was.
// On a machine fast enough to finish first, the merge must have completed instead; never anything between.
TEST(Merge, AMergeStoppedOrKilledMidwayLeavesTheTargetAsItWas) {
    CliScratch dir;
    null_run(dir, "small.db", "1");
    {
        auto big = store::ResultsStore::open(dir.file("big.db"));
        store::RunRecord run;
        run.name = "big";
        run.plan_json = run.environment_json = "{}";
        const std::int64_t id = big.begin_run(run);
        const std::vector<IterationRecord> loop(500'000, IterationRecord{1, 2, 3, 4, 5, 6, 7});
        for (std::int64_t b = 0; b < 4; ++b) {
            store::BenchmarkRecord benchmark;
            benchmark.run_id = id;
            benchmark.ordinal = b;
            benchmark.model = "m";
            benchmark.backend = "null";
            benchmark.device = "cpu";
            benchmark.precision = "fp32";
            benchmark.status = BenchmarkStatus::ok;
            benchmark.settings_json = "{}";
            big.add_benchmark(benchmark, loop);
        }
        big.end_run(id, 1, RunStatus::completed);
    }
    for (const int signal_number : {SIGINT, SIGKILL}) {
        std::filesystem::remove(dir.file("all.db"));
        ASSERT_EQ(dir.run("merge small.db --into all.db").exit_code, 0);
        const auto before = runs_and_iterations(dir.file("all.db"));
        BackgroundCli merge(dir, {"merge", "big.db", "--into", "all.db"}, unique_tag(), "merge");
        const std::string wal = dir.file("all.db-wal");
        const bool writing = wait_until(
            [&] {
                std::error_code error;
                const auto size = std::filesystem::file_size(wal, error);  // no file yet: an error
                return (!error && size > 8'000'000) ||
                       !testing::process_running("/proc/" + std::to_string(merge.pid()));
            },
            60s);
        ASSERT_TRUE(writing) << "the merge neither wrote nor ended within 60 s";

        merge.signal(signal_number);
        ASSERT_TRUE(wait_until([&] { return !testing::process_running("/proc/" + std::to_string(merge.pid())); }, 60s))
            << "the merge did not end within 60 s of the signal";
        const int status = merge.wait();
        const auto after = runs_and_iterations(dir.file("all.db"));
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {  // it had finished
            EXPECT_EQ(after.first, before.first + 1);
            EXPECT_EQ(after.second, before.second + 2'000'000);
            continue;
        }
        EXPECT_EQ(after, before) << "signal " << signal_number << ": " << merge.err();
        if (signal_number == SIGINT) {
            EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
            EXPECT_THAT(merge.err(), HasSubstr("merge stopped by Ctrl-C; all.db is as it was before the merge"));
        }
    }
}

// A store still being written by a live `inferbench run`: merged as it is, said on stderr; merged again once the run
// has ended, the rest of it arrives.
TEST(Merge, AStoreStillBeingWrittenIsMergedAsItIsThenCompleted) {
    CliScratch dir;
    BackgroundCli run(dir,
                      {"run", "--backend", "null", "--model", "null", "--batch", "1,2,3", "--duration", "2s",
                       "--warmup", "0s", "--db", "live.db", "--quiet"},
                      unique_tag(), "run");
    auto stored_benchmarks = [&] {
        std::error_code error;
        if (!std::filesystem::exists(dir.file("live.db"), error)) return std::size_t{0};
        try {
            return store::open_merge_source(dir.file("live.db")).benchmarks().size();
        } catch (const EnvironmentError&) {
            return std::size_t{0};  // not yet a store
        }
    };
    ASSERT_TRUE(wait_until([&] { return stored_benchmarks() >= 1; }, 60s)) << run.err();
    const auto live = dir.run("merge live.db --into all.db --format csv");
    ASSERT_EQ(live.exit_code, 0) << live.err;
    const bool while_running = stored_benchmarks() < 3;  // the run had not ended when the merge read it
    if (while_running) {
        EXPECT_THAT(live.err, HasSubstr("is still running; merged as it is now"));
        EXPECT_THAT(live.out, ::testing::ContainsRegex("live.db,1,0,0,[12],0,0,"));
    }
    ASSERT_TRUE(wait_until([&] { return !testing::process_running("/proc/" + std::to_string(run.pid())); }, 120s))
        << "the run did not end within 120 s";
    const int status = run.wait();
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << run.err();
    const auto rest = dir.run("merge live.db --into all.db --format csv");
    ASSERT_EQ(rest.exit_code, 0) << rest.err;
    EXPECT_THAT(rest.err, ::testing::Not(HasSubstr("still running")));
    if (while_running) {
        EXPECT_THAT(rest.out, ::testing::ContainsRegex("live.db,0,1,0,[12],0,0,[1-9]"));
    }
    auto merged = store::ResultsStore::open(dir.file("all.db"), store::ResultsStore::Access::read);
    ASSERT_EQ(merged.runs().size(), 1u);
    EXPECT_EQ(merged.runs()[0].status, RunStatus::completed);
    EXPECT_EQ(merged.benchmarks().size(), 3u);
}

}  // namespace
}  // namespace inferbench
