// The serving cells' report parts on a stored concurrency sweep (common/serving_fixture.hpp): the serving and sweep
// tables with their marks (Pareto front, goodput knee, saturation), serving.xlsx with its sheets and charts, the
// serving figures and the page's Serving section; and a store without serving cells, which gains none of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "common/scratch_dir.hpp"
#include "core/process/subprocess.hpp"
#include "report/generation_fixture.hpp"
#include "report/html_fixture.hpp"
#include "report/report_fixture.hpp"
#include "report/report_writer.hpp"
#include "common/serving_fixture.hpp"
#include "report/serving_comparison.hpp"
#include "report/serving_plots.hpp"
#include "report/serving_rows.hpp"

namespace inferbench::report {
namespace {

using ::testing::HasSubstr;
using testing::sheet_cells;
using testing::zip_member;

std::string cell_text(const Cell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell)) return *s;
    if (const auto* b = std::get_if<bool>(&cell)) return *b ? "yes" : "no";
    return "<number>";
}

double cell_number(const Cell& cell) {
    if (const auto* d = std::get_if<double>(&cell)) return *d;
    if (const auto* d = std::get_if<Duration>(&cell)) return d->ns;
    if (const auto* i = std::get_if<std::int64_t>(&cell)) return static_cast<double>(*i);
    ADD_FAILURE() << "not a number";
    return -1;
}

std::size_t column(const Table& table, const std::string& key) {
    const auto it = std::find_if(table.columns.begin(), table.columns.end(), [&](const Column& c) { return c.key == key; });
    EXPECT_NE(it, table.columns.end()) << key;
    return static_cast<std::size_t>(it - table.columns.begin());
}

class ServingReport : public ::testing::Test {
protected:
    std::vector<analysis::BenchmarkSummary> summaries(std::optional<double> gpus = std::nullopt) {
        inferbench::testing::write_serving_fixture(db(), gpus);
        const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
        return analysis::summarize_run(results, std::nullopt);
    }
    std::filesystem::path db() const { return scratch_.path() / "r.db"; }
    inferbench::testing::ScratchDir scratch_;
};

TEST_F(ServingReport, ServingTableHasEachCellsFiguresAndDefinitions) {
    const auto s = summaries();
    const Table table = serving_table(s);
    ASSERT_EQ(table.rows.size(), 4u);
    const auto& first = table.rows[0];
    EXPECT_EQ(cell_text(first[column(table, "load")]), "concurrency 1");
    EXPECT_EQ(cell_number(first[column(table, "requests")]), 20);
    EXPECT_EQ(cell_number(first[column(table, "failed")]), 0);
    EXPECT_DOUBLE_EQ(cell_number(first[column(table, "ttft_p50_ms")]), 10e6);
    EXPECT_DOUBLE_EQ(cell_number(first[column(table, "tpot_p50_ms")]), 5e6);
    EXPECT_NEAR(cell_number(first[column(table, "user_tokens_per_s_p50")]), 200, 1e-9);
    EXPECT_DOUBLE_EQ(cell_number(first[column(table, "goodput_pct")]), 100);
    EXPECT_EQ(cell_text(first[column(table, "tokens_per_joule")]), "not measured");
    EXPECT_DOUBLE_EQ(cell_number(table.rows[3][column(table, "goodput_pct")]), 0);  // TTFT 40 ms over the 30 ms bound
    EXPECT_THAT(table.columns[column(table, "tpot_p50_ms")].hint, HasSubstr("AIPerf: inter_token_latency"));
    EXPECT_THAT(table.columns[column(table, "chunk_gap_p99_ms")].hint, HasSubstr("vLLM, SGLang: ITL"));
}

TEST_F(ServingReport, SweepTableMarksTheFrontTheKneeAndSaturation) {
    const auto s = summaries();
    const auto views = sweep_views(serving_cells(s));
    ASSERT_EQ(views.size(), 1u);
    const Table table = sweep_table(views);
    ASSERT_EQ(table.rows.size(), 4u);
    // No GPU count stored: per GPU unknown, never a guess; the front is read per server.
    EXPECT_EQ(cell_text(table.rows[0][column(table, "server_gpus")]), "unknown");
    EXPECT_EQ(cell_text(table.rows[0][column(table, "tokens_per_s_per_gpu")]), "unknown");
    const auto front = column(table, "on_front"), knee = column(table, "goodput_knee"), sat = column(table, "saturation");
    EXPECT_EQ(cell_text(table.rows[0][front]), "yes");
    EXPECT_EQ(cell_text(table.rows[2][front]), "yes");
    EXPECT_EQ(cell_text(table.rows[3][front]), "no");  // slower per user and less per server than concurrency 4
    EXPECT_EQ(cell_text(table.rows[2][knee]), "knee");
    EXPECT_EQ(cell_text(table.rows[2][sat]), "saturates");
    EXPECT_NEAR(cell_number(table.rows[2][column(table, "output_tokens_per_s")]), 4 * 10 / 0.0685, 1e-6);
    const auto statements = sweep_statements(views);
    ASSERT_EQ(statements.size(), 1u);
    EXPECT_THAT(statements[0], HasSubstr("Pareto front (output tokens/s per server): concurrency 4, concurrency 2, concurrency 1"));
    EXPECT_THAT(statements[0], HasSubstr("goodput knee at 99%: concurrency 4"));
    EXPECT_THAT(statements[0], HasSubstr("saturates at concurrency 4"));
}

TEST_F(ServingReport, AStoredGpuCountGivesTokensPerGpu) {
    const auto s = summaries(2);
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    ReportOptions options;
    options.out_dir = scratch_.path() / "report";
    options.plots = false;
    write_report(results, options);
    const std::string csv = testing::read_text(options.out_dir / "serving-sweep.csv");
    EXPECT_THAT(csv, HasSubstr("tokens_per_s_per_gpu"));
    EXPECT_THAT(csv, HasSubstr(",2,"));  // the server's GPUs
    EXPECT_EQ(csv.find("unknown"), std::string::npos) << csv;
}

TEST_F(ServingReport, FiguresDrawTheParetoFrontWithTheKneeAndLatencyAgainstLoad) {
    const auto s = summaries();
    const auto figures = serving_figures(sweep_views(serving_cells(s)));
    ASSERT_EQ(figures.size(), 3u);
    EXPECT_EQ(figures[0].stem, "serving-pareto-per-server");
    ASSERT_EQ(figures[0].lines.size(), 2u);  // every load, and the front
    EXPECT_EQ(figures[0].lines[0].points.size(), 4u);
    EXPECT_EQ(figures[0].lines[1].points.size(), 3u);
    EXPECT_TRUE(std::any_of(figures[0].point_labels.begin(), figures[0].point_labels.end(),
                            [](const auto& label) { return label.second == "4: goodput knee"; }));
    EXPECT_EQ(figures[1].stem, "serving-ttft-vs-concurrency");
    EXPECT_EQ(figures[2].stem, "serving-tpot-vs-concurrency");
    EXPECT_EQ(figures[1].lines.size(), 2u);  // p50, p99
}

TEST_F(ServingReport, ReportWritesTheServingWorkbookTablesAndSection) {
    inferbench::testing::write_serving_fixture(db());
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    ReportOptions options;
    options.out_dir = scratch_.path() / "report";
    options.plots = false;
    const auto report = write_report(results, options);
    const auto wrote = [&](const std::string& name) {
        return std::find(report.files.written.begin(), report.files.written.end(), options.out_dir / name) !=
               report.files.written.end();
    };
    for (const char* name : {"serving.xlsx", "serving.md", "serving.csv", "serving.json", "serving-sweep.md"})
        EXPECT_TRUE(wrote(name)) << name;
    EXPECT_FALSE(wrote("generation.md")) << "its TTFT and TPOT are the serving table's, per request";
    const auto book = options.out_dir / "serving.xlsx";
    const auto run = run_captured({"python3", INFERBENCH_CHECK_XLSX, book.string()}, std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("Serving=5x"));
    EXPECT_THAT(run.out, HasSubstr("Requests=81x"));  // 80 requests and the header
    EXPECT_THAT(run.out, HasSubstr("Chunks=801x"));
    EXPECT_THAT(run.out, HasSubstr("; charts 3;"));  // Pareto, TTFT and TPOT of the one sweep
    const auto requests = sheet_cells(zip_member(book, "xl/worksheets/sheet3.xml"));
    EXPECT_EQ(requests.at("D2"), "ok");
    EXPECT_EQ(requests.at("H2"), "10");  // TTFT ms
    const std::string page = testing::read_text(options.out_dir / "report.html");
    EXPECT_THAT(page, HasSubstr("id=\"serving\""));
    EXPECT_THAT(page, HasSubstr("saturates at concurrency 4"));
    EXPECT_THAT(page, HasSubstr("serving.saturation"));
    EXPECT_THAT(page, HasSubstr("serving.ttft_queueing"));
}

TEST_F(ServingReport, CompareSetsServingCellsSideBySideAgainstTheBaseline) {
    auto cells = analysis::combine_cells(summaries());
    for (auto& s : cells) s.e2e.count = 20;  // as the worker stores them: one iteration per ok request
    ComparisonSource a{.db = "a.db", .runs = {store::RunRecord{}}, .summaries = cells};
    ComparisonSource b{.db = "b.db", .runs = {store::RunRecord{}}, .summaries = cells};
    a.runs[0].run_id = 1;
    b.runs[0].run_id = 2;
    for (auto& s : b.summaries) *s.serving->output_tokens_per_s *= 2;  // a server twice as fast
    const Table table = serving_comparison_table(build_comparison({a, b}, ""));
    ASSERT_EQ(table.rows.size(), 4u);
    EXPECT_EQ(cell_text(table.rows[0][column(table, "variant")]), "concurrency=1 input_tokens=32 output_tokens=10");
    EXPECT_DOUBLE_EQ(cell_number(table.rows[0][column(table, "s1_tokens_ratio")]), 1.0);
    EXPECT_DOUBLE_EQ(cell_number(table.rows[0][column(table, "s2_tokens_ratio")]), 2.0);
    EXPECT_DOUBLE_EQ(cell_number(table.rows[3][column(table, "s2_goodput_pct")]), 0.0);
    EXPECT_DOUBLE_EQ(cell_number(table.rows[0][column(table, "s1_ttft_p50_ms")]), 10e6);
}

TEST_F(ServingReport, AStoreWithoutServingCellsGainsNothing) {
    testing::write_generation_fixture(db());
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    ReportOptions options;
    options.out_dir = scratch_.path() / "report";
    options.plots = false;
    std::filesystem::create_directories(options.out_dir);
    std::ofstream(options.out_dir / "serving.xlsx") << "an earlier report's";
    write_report(results, options);
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "serving.xlsx"));
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "serving.md"));
    EXPECT_EQ(testing::read_text(options.out_dir / "report.html").find("id=\"serving\""), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
