// A merged store's hosts and GPUs side by side: compare's columns per host's device (the seed's RTX 2080 / T4 /
// A100 / V100 table), energy per inference only where power was measured, cells run under other settings flagged,
// the summary naming each row's host and GPU, and the report's side-by-side files, sheet and page section.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>

#include "analysis/repeats.hpp"
#include "common/fleet_store.hpp"
#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/process/subprocess.hpp"
#include "report/comparison.hpp"
#include "report/fleet_comparison.hpp"
#include "report/report_data.hpp"
#include "report/report_writer.hpp"
#include "report/selection.hpp"
#include "report/summary_table.hpp"

namespace inferbench::report {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class FleetStore : public ::testing::Test {
protected:
    void SetUp() override { inferbench::testing::write_fleet_store(db()); }
    std::filesystem::path db() const { return dir.path() / "all.db"; }

    // Every run's cells, summarized and their repeats combined, as `compare --run all` loads them.
    std::vector<analysis::BenchmarkSummary> cells() const {
        const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
        ReportFilter all;
        all.runs = "all";
        return analysis::combine_cells(load_selection(results, select_benchmarks(results, all)).summaries());
    }
    Comparison comparison() const {
        const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
        return build_comparison({ComparisonSource{.db = "all.db", .runs = results.runs(), .summaries = cells()}}, "");
    }
    inferbench::testing::ScratchDir dir;
};

std::string read_text(const std::filesystem::path& file) {
    std::ifstream in(file);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string without_spaces(std::string text) {
    text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
    return text;
}

const Cell& cell(const Table& table, std::size_t row, const std::string& key) {
    const auto it =
        std::find_if(table.columns.begin(), table.columns.end(), [&](const Column& c) { return c.key == key; });
    EXPECT_NE(it, table.columns.end()) << key;
    return table.rows.at(row).at(static_cast<std::size_t>(it - table.columns.begin()));
}

TEST_F(FleetStore, TheSeedGpusAreTheColumnsEachNamingItsHostDriverAndFramework) {
    const auto c = comparison();
    std::vector<std::string> labels;
    for (const auto& side : c.sides) labels.push_back(side.label);
    EXPECT_THAT(labels, ElementsAre("NVIDIA GeForce RTX 2080", "Tesla T4", "NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:0",
                                    "Tesla V100-SXM2-16GB", "NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:1"));
    EXPECT_EQ(c.sides[1].host, "gcp-t4");
    EXPECT_EQ(c.sides[3].driver, "470.182.03");
    EXPECT_THAT(c.sides[0].frameworks, ElementsAre("onnxruntime 1.17.1"));
    // The A100 host's cuda:0 ran in runs 3 and 5: one column, the later run's figures.
    EXPECT_THAT(c.sides[2].run_ids, ElementsAre(3, 5));
    EXPECT_EQ(c.sides[2].superseded, 2u);
    ASSERT_EQ(c.rows.size(), 2u);  // resnet50 fp16 at batch 1 and 8, on every side
    EXPECT_EQ(c.at(c.rows[0], 2)->benchmark.run_id, 5);
    EXPECT_TRUE(c.spans_hosts_or_gpus());
    const auto legend = comparison_legend(c);
    EXPECT_EQ(legend[0],
              "[1] NVIDIA GeForce RTX 2080 (cuda:0): all.db run 1 on ws-2080, driver 535.104.05, onnxruntime 1.17.1, "
              "baseline");
    EXPECT_EQ(legend[2],
              "[3] NVIDIA A100-SXM4-40GB @ dgx-a100 cuda:0 (cuda:0): all.db runs 3, 5 on dgx-a100, driver 550.54.15, "
              "onnxruntime 1.17.1");
    const auto text = render_comparison(c, Format::text);
    for (const auto& host : inferbench::testing::kSeedHosts) {
        EXPECT_THAT(text, HasSubstr(host.gpu));
        EXPECT_THAT(text, HasSubstr(std::string("on ") + host.host));
    }
    EXPECT_THAT(text, HasSubstr("warning: [3] 2 benchmarks were measured in several runs (3, 5): the latest run's "
                                "figures are shown"));
}

TEST_F(FleetStore, EnergyPerInferenceWhereMeasuredElseSaidNotMeasured) {
    const auto c = comparison();
    const auto table = comparison_table(c);
    // Batch 1 on the RTX 2080: 215 W for 2.4 ms per inference (energy integrated over the power samples, which
    // cover the measured time to within a sampling interval: 2%).
    EXPECT_NEAR(std::get<double>(cell(table, 0, "s1_joules_per_inference")), 215 * 2.4e-3, 215 * 2.4e-3 * 0.02);
    EXPECT_NEAR(std::get<double>(cell(table, 0, "s1_power_w")), 215, 1e-9);
    EXPECT_NEAR(std::get<double>(cell(table, 0, "s2_inferences_per_joule")), 1 / (70 * 3.1e-3), 0.02 / (70 * 3.1e-3));
    // Batch 8 on the V100: no power samples stored.
    for (const char* key : {"s4_power_w", "s4_joules_per_inference", "s4_inferences_per_joule"})
        EXPECT_EQ(std::get<std::string>(cell(table, 1, key)), "not measured") << key;
    EXPECT_TRUE(std::holds_alternative<Null>(cell(table, 1, "s4_efficiency_ratio")));
    EXPECT_GT(std::get<double>(cell(table, 1, "s4_throughput_per_s")), 0) << "its speed was measured";
    // Data formats keep no text in a number's place: empty where not measured.
    const auto long_table = comparison_long_table(c);
    std::size_t v100_b8 = long_table.rows.size();
    for (std::size_t r = 0; r < long_table.rows.size(); ++r)
        if (std::get<std::int64_t>(cell(long_table, r, "side")) == 4 &&
            std::get<std::int64_t>(cell(long_table, r, "batch_size")) == 8)
            v100_b8 = r;
    ASSERT_LT(v100_b8, long_table.rows.size());
    EXPECT_TRUE(std::holds_alternative<Null>(cell(long_table, v100_b8, "joules_per_inference")));
    EXPECT_EQ(std::get<std::string>(cell(long_table, v100_b8, "host")), "p3-v100");
    EXPECT_EQ(std::get<std::string>(cell(long_table, v100_b8, "device_name")), "Tesla V100-SXM2-16GB");
    EXPECT_EQ(std::get<std::string>(cell(long_table, v100_b8, "driver_version")), "470.182.03");
    EXPECT_EQ(std::get<std::string>(cell(long_table, v100_b8, "backend_version")), "1.17.1");
}

TEST_F(FleetStore, CellsMeasuredUnderOtherSettingsAreFlagged) {
    const auto c = comparison();
    // Batch 8 on the T4 ran 2 s, the baseline's 10 s; the A100s ran beside each other.
    EXPECT_THAT(settings_differences(c, c.rows[1], 1), ElementsAre("duration 2s ([1] 10s)"));
    EXPECT_THAT(settings_differences(c, c.rows[0], 1), ::testing::IsEmpty());
    EXPECT_THAT(settings_differences(c, c.rows[0], 4),
                ElementsAre("concurrency beside other devices' benchmarks ([1] alone)"));
    EXPECT_THAT(settings_differences(c, c.rows[1], 0), ::testing::IsEmpty()) << "the reference itself";
    const auto table = comparison_table(c);
    EXPECT_EQ(std::get<std::string>(cell(table, 1, "settings_differ")),
              "[2] duration 2s ([1] 10s); [3] concurrency beside other devices' benchmarks ([1] alone); "
              "[5] concurrency beside other devices' benchmarks ([1] alone)");
    const auto warnings = comparison_warnings(c);
    EXPECT_THAT(warnings, ::testing::Contains("the sides ran with different settings: duration differs: [1] 10s, "
                                              "[2] 2s, [3] 10s, [4] 10s, [5] 10s (1 row)"));
    // The baseline elsewhere: the reference moves with it.
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    const auto t4 =
        build_comparison({ComparisonSource{.db = "all.db", .runs = results.runs(), .summaries = cells()}}, "T4");
    EXPECT_THAT(settings_differences(t4, t4.rows[1], 0), ElementsAre("duration 10s ([2] 2s)"));
    // A fleet's column by its host's name, where one matches.
    EXPECT_EQ(
        build_comparison({ComparisonSource{.db = "all.db", .runs = results.runs(), .summaries = cells()}}, "p3-v100")
            .baseline,
        3u);
    EXPECT_THROW(
        build_comparison({ComparisonSource{.db = "all.db", .runs = results.runs(), .summaries = cells()}}, "dgx-a100"),
        UserError);  // both of its GPUs
}

TEST_F(FleetStore, SummaryNamesEachRowsHostAndGpu) {
    const auto table = summary_table(cells());
    const auto device =
        std::find_if(table.columns.begin(), table.columns.end(), [](const Column& c) { return c.key == "device"; });
    ASSERT_NE(device, table.columns.end());
    EXPECT_EQ((device + 1)->key, "host");
    EXPECT_EQ((device + 2)->key, "device_name");
    EXPECT_FALSE((device + 1)->export_only);
    const auto text = render(table, Format::text, {.columns = {}, .width = 160, .hide_empty = true});
    for (const auto& host : inferbench::testing::kSeedHosts) EXPECT_THAT(text, HasSubstr(host.host));
    EXPECT_THAT(text, HasSubstr("Tesla T4"));
    // One host's run alone: the columns stay for files, as before.
    auto one = cells();
    one.erase(std::remove_if(one.begin(), one.end(), [](const auto& s) { return s.benchmark.run_id != 1; }), one.end());
    const auto single = summary_table(one);
    const auto host =
        std::find_if(single.columns.begin(), single.columns.end(), [](const Column& c) { return c.key == "host"; });
    ASSERT_NE(host, single.columns.end());
    EXPECT_TRUE(host->export_only);
}

TEST_F(FleetStore, ReportWritesTheSideBySideFilesSheetAndSection) {
    const auto results = store::ResultsStore::open(db(), store::ResultsStore::Access::read);
    ReportOptions options;
    options.filter.runs = "all";
    options.out_dir = dir.path() / "report";
    options.plots = false;
    const auto report = write_report(results, options);
    for (const char* name : {"comparison.md", "comparison.csv", "comparison.json", "comparison.xlsx"})
        EXPECT_TRUE(std::filesystem::exists(options.out_dir / name)) << name;
    const auto md = read_text(options.out_dir / "comparison.md");
    EXPECT_THAT(md, HasSubstr("- [4] Tesla V100-SXM2-16GB (cuda:0): "));
    EXPECT_THAT(md, HasSubstr("all.db run 4 on p3-v100, driver 470.182.03, onnxruntime 1.17.1\n"));
    EXPECT_THAT(md, HasSubstr("not measured"));
    const auto page = read_text(options.out_dir / "report.html");
    EXPECT_THAT(page, HasSubstr("Side by side"));
    EXPECT_THAT(page, HasSubstr("data-table=\"comparison\""));
    EXPECT_THAT(page, HasSubstr("dgx-a100"));
    // The overview names each row's host and GPU beside its device.
    const auto overview = page.find("data-table=\"benchmarks\"");
    ASSERT_NE(overview, std::string::npos);
    const auto device = page.find("data-key=\"device\"", overview);
    const auto host = page.find("data-key=\"host\"", overview);
    const auto name = page.find("data-key=\"device_name\"", overview);
    EXPECT_LT(device, host);
    EXPECT_LT(host, name);
    EXPECT_LT(name, page.find("data-key=\"precision\"", overview));
    const auto summary = read_text(options.out_dir / "summary.md");
    EXPECT_THAT(without_spaces(summary), HasSubstr("|device|host|devicename|precision|"));
    const auto book = options.out_dir / "comparison.xlsx";
    const auto run = run_captured({"python3", INFERBENCH_CHECK_XLSX, book.string()}, std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.out << run.err;
    EXPECT_THAT(run.out, HasSubstr("Side by side=3x"));  // the header and two rows
    EXPECT_THAT(run.out, HasSubstr("Sides=6x"));         // the header and five columns' sides

    // One host's run: no side by side, and an earlier report's files are not left behind.
    options.filter.runs = "1";
    write_report(results, options);
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "comparison.md"));
    EXPECT_FALSE(std::filesystem::exists(options.out_dir / "comparison.xlsx"));
    EXPECT_THAT(read_text(options.out_dir / "report.html"), Not(HasSubstr("Side by side")));
}

}  // namespace
}  // namespace inferbench::report
