// What a report holds of a store at one time: one group's iteration rows (and a copy of one of its benchmarks'
// that the findings judge), each benchmark's rows read once, never the whole store's; `explain` one benchmark's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "common/scratch_dir.hpp"
#include "devices/catalog.hpp"
#include "findings/findings.hpp"
#include "report/html_fixture.hpp"
#include "report/html_page.hpp"
#include "report/report_writer.hpp"

namespace inferbench::report {
namespace {

// Four runs (shards of one plan, as a merged store holds them), each one batch sweep: a group of its own in a
// selection of every run. Iteration counts per benchmark, by run.
const std::vector<std::vector<int>> kRuns = {{300, 200}, {100, 100}, {50, 50}, {250, 250}};
constexpr std::size_t kLargestGroup = 500, kLargestBenchmark = 300, kTotal = 1300;

std::vector<IterationRecord> iterations(int count, std::int64_t batch) {
    std::vector<IterationRecord> rows;
    std::int64_t t = 1'000'000'000;
    for (int i = 0; i < count; ++i) {
        // A latency that drifts and jumps, so that the findings' timing rules have something to say.
        const std::int64_t e2e = 1'000'000 * batch + (i % 7) * 20'000 + (i > count / 2 ? 300'000 : 0);
        rows.push_back({t, e2e, kNotMeasured, 10'000, e2e - 50'000, 10'000});
        t += e2e + 1'000;
    }
    return rows;
}

void write_store(const std::filesystem::path& db) {
    auto results = store::ResultsStore::open(db);
    for (std::size_t r = 0; r < kRuns.size(); ++r) {
        store::RunRecord run;
        run.name = "shard";
        run.started_unix_ms = 1'700'000'000'000 + static_cast<std::int64_t>(r);
        run.shard = store::Shard{static_cast<std::int64_t>(r + 1), static_cast<std::int64_t>(kRuns.size())};
        const auto run_id = results.begin_run(run);
        for (std::size_t i = 0; i < kRuns[r].size(); ++i) {
            store::BenchmarkRecord b;
            b.run_id = run_id;
            b.ordinal = static_cast<std::int64_t>(i);
            b.model = "model" + std::to_string(r);
            b.backend = "onnxruntime";
            b.device = "cpu";
            b.precision = "fp32";
            b.batch_size = std::int64_t{1} << i;
            b.status = BenchmarkStatus::ok;
            b.settings_json = "{}";
            const auto rows = iterations(kRuns[r][i], b.batch_size);
            b.measured_wall_ns = rows.back().start_ns + rows.back().e2e_ns - rows.front().start_ns;
            results.add_benchmark(b, rows);
        }
        results.end_run(run_id, run.started_unix_ms + 1000, RunStatus::completed);
    }
}

TEST(ReportMemory, HoldsOneGroupsIterationsAtATimeAndReadsEachBenchmarkOnce) {
    inferbench::testing::ScratchDir dir;
    write_store(dir.path() / "merged.db");
    const auto results = store::ResultsStore::open(dir.path() / "merged.db", store::ResultsStore::Access::read);
    ReportOptions options;
    options.filter.runs = "all";
    options.out_dir = dir.path() / "report";
    options.plots = false;  // gnuplot draws from the same group; the rows held are the same without it
    const auto before = results.read_counts();
    const ReportResult report = write_report(results, options);
    const auto reads = results.read_counts();

    EXPECT_EQ(reads.iterations - before.iterations, 8) << "each benchmark's iterations read once";
    EXPECT_EQ(report.summary.rows.size(), 8u);
    // A group's rows and one benchmark's copy (the findings judge it), released before the next group.
    EXPECT_EQ(report.most_iterations_held, kLargestGroup + kLargestBenchmark);
    EXPECT_LT(report.most_iterations_held, kTotal);
}

Chart chart(const std::string& title, double scale) {
    Chart c{.title = title, .x_label = "iteration", .y_label = "latency (ms)"};
    ChartSeries s{.label = "batch <1> & \xff"};  // escaped as the page escapes it, invalid UTF-8 replaced
    for (int i = 0; i < 50; ++i) {
        s.x.push_back(i);
        s.y.push_back(i % 7 == 0 ? std::nan("") : scale * i);
    }
    c.series.push_back(std::move(s));
    return c;
}

// The page without its nonces, which each writing draws anew.
std::string without_nonces(const std::string& page) {
    return std::regex_replace(page, std::regex("nonce(-|=\")[^'\"]+"), "nonce");
}

TEST(ReportMemory, SpooledChartsMakeTheSamePageAsChartsHeldInMemory) {
    HtmlPage held("page");
    HtmlPage spooled("page");
    ChartSpool spool;
    for (HtmlPage* page : {&held, &spooled}) page->chart(chart("own, before", 1));
    held.open_section("group <a>");
    held.raw("<div class=\"charts\">\n");
    for (const auto& c : {chart("first", 2), chart("second", 3)}) held.chart(c);
    held.raw("</div>\n");
    held.close_section();
    held.open_section("group b");
    held.raw("<div class=\"charts\">\n");
    held.chart(chart("third", 4));
    held.raw("</div>\n");
    held.close_section();
    spool.add("group <a>", {chart("first", 2), chart("second", 3)});
    spool.add("empty group", {});
    spool.add("group b", {chart("third", 4)});
    spooled.spooled_charts(spool);
    for (HtmlPage* page : {&held, &spooled}) page->chart(chart("own, after", 5));
    EXPECT_EQ(spooled.chart_count(), 5u);

    inferbench::testing::ScratchDir dir;
    spooled.write_file(dir.path() / "spooled.html");
    const std::string written = testing::read_text(dir.path() / "spooled.html");
    EXPECT_EQ(without_nonces(spooled.finish()), without_nonces(held.finish()));
    EXPECT_EQ(without_nonces(written), without_nonces(held.finish()));
    EXPECT_NE(written.find("data-chart=\"3\"><figcaption>third"), std::string::npos);
}

TEST(ReportMemory, LoadSelectionFreesEachGroupsRowsAfterItIsSeen) {
    inferbench::testing::ScratchDir dir;
    write_store(dir.path() / "merged.db");
    const auto results = store::ResultsStore::open(dir.path() / "merged.db", store::ResultsStore::Access::read);
    std::vector<std::size_t> seen;
    const auto selection = load_selection(results, results.benchmarks(), [&](ReportGroup& group) {
        std::size_t rows = 0;
        for (const auto& b : group.benchmarks) rows += b.iterations.size();
        seen.push_back(rows);
    });
    EXPECT_EQ(seen, (std::vector<std::size_t>{500, 200, 100, 500}));
    for (const auto& group : selection.groups)
        for (const auto& b : group.benchmarks) {
            // Freed, not only emptied: no capacity left behind.
            EXPECT_EQ(b.iterations.capacity() + b.gpu.capacity() + b.cpu.capacity(), 0u) << b.label;
        }
}

TEST(ReportMemory, ExplainReadsOneBenchmarkAtATimeAndFindsWhatTheWholeSelectionShows) {
    inferbench::testing::ScratchDir dir;
    write_store(dir.path() / "merged.db");
    const auto results = store::ResultsStore::open(dir.path() / "merged.db", store::ResultsStore::Access::read);
    const auto benchmarks = results.benchmarks();
    const auto before = results.read_counts();
    const auto streamed = findings::explain(results, benchmarks);
    EXPECT_EQ(results.read_counts().iterations - before.iterations, 8) << "each benchmark's iterations read once";

    // The same findings, in the same order, as from every benchmark's rows held at once.
    const auto all_at_once = findings::explain(findings::load_evidence(results, benchmarks, devices::load_catalog()));
    ASSERT_FALSE(all_at_once.empty());
    ASSERT_EQ(streamed.size(), all_at_once.size());
    for (std::size_t i = 0; i < streamed.size(); ++i)
        EXPECT_EQ(findings::to_json(streamed[i]).dump(), findings::to_json(all_at_once[i]).dump());
}

TEST(ReportMemory, EvidenceWithoutRowsKeepsWhatTheRulesAcrossBenchmarksRead) {
    inferbench::testing::ScratchDir dir;
    write_store(dir.path() / "merged.db");
    const auto results = store::ResultsStore::open(dir.path() / "merged.db", store::ResultsStore::Access::read);
    auto evidence = findings::load_evidence(results, results.benchmarks(), devices::load_catalog());
    EXPECT_EQ(findings::iterations_held(evidence), kTotal);
    std::vector<findings::BenchmarkFindings> own;
    for (auto& e : evidence) {
        own.push_back(findings::benchmark_findings(e));
        const auto stages = e.stages;
        findings::release_rows(e);
        // Freed, not only emptied: no capacity left behind.
        EXPECT_EQ(e.iterations.capacity() + e.gpu.capacity() + e.cpu.capacity() + e.generation_steps.capacity(), 0u);
        EXPECT_EQ(e.stages.compute_ns, stages.compute_ns) << "the stage means stay";
    }
    EXPECT_EQ(findings::iterations_held(evidence), 0u);
    const auto fresh = findings::load_evidence(results, results.benchmarks(), devices::load_catalog());
    const auto released = findings::explain(evidence, own);
    const auto held = findings::explain(fresh);
    ASSERT_EQ(released.size(), held.size());
    for (std::size_t i = 0; i < held.size(); ++i)
        EXPECT_EQ(findings::to_json(released[i]).dump(), findings::to_json(held[i]).dump());
}

}  // namespace
}  // namespace inferbench::report
