// The pipeline cells' report parts on cells written through the store (common/pipeline_store.hpp): the pipeline and
// stage tables, the stacked bars (gnuplot and the page's chart), pipeline.xlsx, the page's Pipeline section, compare
// against the network-only cell; and a store without pipeline cells, which gains none of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "analysis/repeats.hpp"
#include "analysis/summary.hpp"
#include "common/pipeline_store.hpp"
#include "common/scratch_dir.hpp"
#include "core/process/subprocess.hpp"
#include "report/generation_fixture.hpp"
#include "report/html_fixture.hpp"
#include "report/pipeline_comparison.hpp"
#include "report/pipeline_plots.hpp"
#include "report/pipeline_rows.hpp"
#include "report/report_writer.hpp"

namespace inferbench::report {
namespace {

using ::testing::HasSubstr;

std::string cell_text(const Cell& cell) {
    if (const auto* s = std::get_if<std::string>(&cell)) return *s;
    return "<not text>";
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

// A GPU cell: decode on the CPU (CPU time measured), infer on the GPU (none), and its network-only twin.
inferbench::testing::PipelineCell gpu_cell() {
    auto c = inferbench::testing::decode_bound_cell();
    c.device = "cuda:0";
    for (auto& s : c.stages)
        if (s.stage == PipelineStage::infer) {
            s.place = StagePlace::gpu;
            s.cpu_us = -1;
        }
    c.gap_us = 100;
    return c;
}

class PipelineReport : public ::testing::Test {
protected:
    void write_store(bool with_network_only = true) {
        auto results = store::ResultsStore::open(db());
        const auto run = inferbench::testing::add_run(results);
        inferbench::testing::add_pipeline_cell(results, run, gpu_cell(), 0, with_network_only);
    }
    std::vector<analysis::BenchmarkSummary> summaries() {
        const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
        return analysis::summarize_run(results, std::nullopt);
    }
    std::filesystem::path db() const { return scratch_.path() / "r.db"; }
    inferbench::testing::ScratchDir scratch_;
};

TEST_F(PipelineReport, TheTablesShowEachCellAndStageWithUnknownsSaidSo) {
    write_store();
    const auto all = summaries();
    const Table cells = pipeline_table(all);
    ASSERT_EQ(cells.rows.size(), 1u);  // the network-only cell is no pipeline cell
    const auto& row = cells.rows[0];
    EXPECT_EQ(cell_text(row[column(cells, "pipeline")]), "cpu/cpu sequential");
    EXPECT_NEAR(cell_number(row[column(cells, "images_per_s")]), 8 / 7.3e-3, 1e-6);  // 7.2 ms of stages + 0.1 gap
    EXPECT_NEAR(cell_number(row[column(cells, "network_pct")]), 100 * 1.5 / 7.3, 1e-9);
    EXPECT_NEAR(cell_number(row[column(cells, "gpu_idle_pct")]), 100 * (1 - 1.5 / 7.3), 1e-9);
    EXPECT_NEAR(cell_number(row[column(cells, "between_pct")]), 100 * 0.1 / 7.3, 1e-9);
    EXPECT_EQ(cell_text(row[column(cells, "bound_stage")]), "decode");
    EXPECT_FALSE(cells.columns[column(cells, "gpu_idle_pct")].hint.empty());

    const Table stages = pipeline_stage_table(all);
    ASSERT_EQ(stages.rows.size(), 6u);
    const auto& infer = stages.rows[4];
    EXPECT_EQ(cell_text(infer[column(stages, "stage")]), "infer");
    EXPECT_EQ(cell_text(infer[column(stages, "cores")]), "on the GPU");
    EXPECT_EQ(cell_text(infer[column(stages, "stage_bound_images_per_s")]), "on the GPU");
    const auto& decode = stages.rows[1];
    EXPECT_DOUBLE_EQ(cell_number(decode[column(stages, "mean_ms")]), 4e6);
    EXPECT_NEAR(cell_number(decode[column(stages, "cpu_per_image_ms")]), 7e6 / 8, 1e-6);
    EXPECT_NEAR(cell_number(decode[column(stages, "stage_bound_images_per_s")]), 2 * 8 / 7e-3, 1e-6);
}

TEST_F(PipelineReport, TheStackedBarAddsUpToTheBatchsMeanE2e) {
    write_store();
    const auto all = summaries();
    const auto d = stage_breakdown(all);
    ASSERT_EQ(d.cells.size(), 1u);
    EXPECT_EQ(d.segments, (std::vector<std::string>{"read", "decode", "resize", "normalize", "infer", "postprocess",
                                                    "between stages"}));
    double total = 0;
    for (const double ms : d.ms[0]) total += ms;
    EXPECT_NEAR(total, 7.3, 1e-9);
    const Chart chart = stage_breakdown_chart(d);
    EXPECT_EQ(chart.type, ChartType::stacked_bars);
    ASSERT_EQ(chart.series.size(), 7u);
    EXPECT_NEAR(chart.series.front().y[0], 7.3, 1e-9);  // the whole bar first
    EXPECT_NEAR(chart.series.back().y[0], 0.1, 1e-9);   // read alone last
    if (!gnuplot_available()) GTEST_SKIP() << "gnuplot not installed";
    const auto files = write_pipeline_plots(all, scratch_.path(), PlotOptions{});
    ASSERT_EQ(files.written.size(), 2u);
    for (const auto& file : files.written) EXPECT_GT(std::filesystem::file_size(file), 1000u) << file;
    EXPECT_THAT(testing::read_text(scratch_.path() / "pipeline-stages.svg"), HasSubstr("between stages"));
}

TEST_F(PipelineReport, ReportWritesThePipelineTablesWorkbookAndSection) {
    write_store();
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    ReportOptions options;
    options.out_dir = scratch_.path() / "report";
    options.plots = false;
    const auto report = write_report(results, options);
    for (const char* name : {"pipeline.xlsx", "pipeline.md", "pipeline.csv", "pipeline.json", "pipeline-stages.md"})
        EXPECT_NE(std::find(report.files.written.begin(), report.files.written.end(), options.out_dir / name),
                  report.files.written.end())
            << name;
    const auto book = options.out_dir / "pipeline.xlsx";
    const auto run = run_captured({"python3", INFERBENCH_CHECK_XLSX, book.string()}, std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("Pipeline=2x"));
    EXPECT_THAT(run.out, HasSubstr("Stages=7x"));
    EXPECT_THAT(run.out, HasSubstr("Breakdown=2x"));
    const std::string page = testing::read_text(options.out_dir / "report.html");
    EXPECT_THAT(page, HasSubstr("id=\"pipeline\""));
    EXPECT_THAT(page, HasSubstr("stacked_bars"));
    EXPECT_THAT(page, HasSubstr("pipeline.network_share"));  // the finding, among the page's findings
}

TEST_F(PipelineReport, CompareSetsThePipelineBesideItsNetworkOnlyCell) {
    write_store();
    auto cells = analysis::combine_cells(summaries());
    ComparisonSource a{.db = "a.db", .runs = {store::RunRecord{}}, .summaries = cells};
    a.runs[0].run_id = 1;
    const Comparison comparison = build_comparison({a}, "");
    ASSERT_EQ(comparison.rows.size(), 2u);  // the pipeline cell is a row of its own
    const Table table = pipeline_comparison_table(comparison);
    ASSERT_EQ(table.rows.size(), 1u);
    EXPECT_EQ(cell_text(table.rows[0][column(table, "variant")]), "pipeline=cpu/cpu sequential");
    const double network = 8 / 1.5e-3, pipeline = 8 / 7.3e-3;  // the network-only cell: 1.5 ms a batch of 8
    EXPECT_NEAR(cell_number(table.rows[0][column(table, "s1_network_per_s")]), network, 1e-6);
    EXPECT_NEAR(cell_number(table.rows[0][column(table, "s1_pipeline_images_per_s")]), pipeline, 1e-6);
    EXPECT_NEAR(cell_number(table.rows[0][column(table, "s1_lost_pct")]), 100 * (1 - pipeline / network), 1e-9);
    EXPECT_THAT(render_comparison(comparison, Format::text), HasSubstr("pipeline cells beside the network-only cell"));
}

TEST_F(PipelineReport, CompareSaysWhenNoNetworkOnlyCellWasMeasured) {
    write_store(false);
    ComparisonSource a{.db = "a.db", .runs = {store::RunRecord{}}, .summaries = analysis::combine_cells(summaries())};
    a.runs[0].run_id = 1;
    const Table table = pipeline_comparison_table(build_comparison({a}, ""));
    ASSERT_EQ(table.rows.size(), 1u);
    EXPECT_EQ(cell_text(table.rows[0][column(table, "s1_network_per_s")]), "not measured");
    EXPECT_EQ(cell_text(table.rows[0][column(table, "s1_lost_pct")]), "unknown");
}

TEST_F(PipelineReport, AStoreWithoutPipelineCellsGainsNothing) {
    testing::write_generation_fixture(db());
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    ReportOptions options;
    options.out_dir = scratch_.path() / "report";
    options.plots = false;
    std::filesystem::create_directories(options.out_dir);
    std::ofstream(options.out_dir / "pipeline.xlsx") << "an earlier report's";
    write_report(results, options);
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "pipeline.xlsx"));
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "pipeline.md"));
    EXPECT_EQ(testing::read_text(options.out_dir / "report.html").find("id=\"pipeline\""), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
