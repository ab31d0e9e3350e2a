// `inferbench report` of a store with generative benchmarks: the Generation and Generation steps workbooks, the
// generation figures and the page's Generation section, from benchmarks written through the store's API; and the
// same report of a store without any, which gains none of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "common/scratch_dir.hpp"
#include "core/process/subprocess.hpp"
#include "report/generation_fixture.hpp"
#include "report/gnuplot.hpp"
#include "report/html_fixture.hpp"
#include "report/report_fixture.hpp"
#include "report/report_writer.hpp"

namespace inferbench::report {
namespace {

using testing::sheet_cells;
using testing::zip_member;
using testing::zip_members;

// A sheet's cells by (column title, data row from 1): the header row names the columns.
struct SheetValues {
    std::map<std::string, std::string> cells;   // "B2" -> text
    std::map<std::string, std::string> column;  // title -> letters
    std::string at(const std::string& title, int row) const {
        const auto c = column.find(title);
        if (c == column.end()) return "<no column " + title + ">";
        const auto v = cells.find(c->second + std::to_string(row + 1));
        return v == cells.end() ? "" : v->second;
    }
    double number(const std::string& title, int row) const { return std::stod(at(title, row)); }
    int rows() const {
        int last = 0;
        for (const auto& [ref, text] : cells) last = std::max(last, std::stoi(ref.substr(ref.find_first_of("0123456789"))));
        return last - 1;
    }
};

SheetValues sheet_values(const std::string& xml) {
    SheetValues values;
    values.cells = sheet_cells(xml);
    for (const auto& [ref, text] : values.cells) {
        const auto digits = ref.find_first_of("0123456789");
        if (ref.substr(digits) == "1") values.column[text] = ref.substr(0, digits);
    }
    return values;
}

class GenerationReport : public ::testing::Test {
protected:
    ReportResult run_report(const std::filesystem::path& db, bool plots) {
        const auto results = store::ResultsStore::open(db, store::ResultsStore::Access::read);
        options_.out_dir = scratch_.path() / "report";
        options_.plots = plots;
        options_.plot.formats = {ImageFormat::png, ImageFormat::svg};
        const auto before = results.read_counts();
        auto report = write_report(results, options_);
        const auto after = results.read_counts();
        // Every output, the generation workbooks and figures included, from one read of each benchmark's rows.
        const auto benchmarks = static_cast<std::int64_t>(results.benchmarks().size());
        EXPECT_EQ(after.iterations - before.iterations, benchmarks);
        EXPECT_EQ(after.gpu_samples - before.gpu_samples, benchmarks);
        return report;
    }
    bool wrote(const ReportResult& report, const std::string& name) const {
        const auto& w = report.files.written;
        return std::find(w.begin(), w.end(), options_.out_dir / name) != w.end();
    }
    std::filesystem::path db() const { return scratch_.path() / "r.db"; }

    inferbench::testing::ScratchDir scratch_;
    ReportOptions options_;
};

TEST_F(GenerationReport, GenerationSheetHasOneRowPerGenerativeCellWithItsMetricsAndBounds) {
    testing::write_generation_fixture(db());
    const auto report = run_report(db(), false);
    ASSERT_TRUE(wrote(report, "generation.xlsx"));
    const auto book = options_.out_dir / "generation.xlsx";
    const auto values = sheet_values(zip_member(book, "xl/worksheets/sheet1.xml"));
    ASSERT_EQ(values.rows(), 4) << "one row per generative cell; the ordinary benchmark has none";
    // Ordered by series (model backend precision device), output then input tokens, then batch: the CPU's first.
    EXPECT_EQ(values.at("device", 1), "cpu");
    EXPECT_EQ(values.at("tpot_p50_ms", 1), "not defined") << "one output token: no TPOT, never a 0";
    EXPECT_EQ(values.at("decode_tokens_per_s", 1), "not defined");
    EXPECT_EQ(values.at("decode_bound_pct", 1), "unknown") << "no bandwidth of this CPU is known";
    EXPECT_EQ(values.at("tokens_per_joule", 1), "not measured");
    const std::vector<std::pair<double, double>> batch_input = {{1, 16}, {4, 16}, {1, 64}};
    for (int row = 2; row <= 4; ++row) {
        const auto [batch, input] = batch_input[static_cast<std::size_t>(row - 2)];
        SCOPED_TRACE(row);
        EXPECT_EQ(values.at("model", row), "llama-tiny");
        EXPECT_EQ(values.at("device", row), "cuda:0");
        EXPECT_EQ(values.number("batch_size", row), batch);
        EXPECT_EQ(values.number("input_tokens", row), input);
        EXPECT_EQ(values.number("output_tokens", row), 5);
        EXPECT_EQ(values.number("generations", row), 4);
        EXPECT_DOUBLE_EQ(values.number("ttft_p50_ms", row), 10.0);
        EXPECT_DOUBLE_EQ(values.number("ttft_p99_ms", row), 10.0);
        EXPECT_DOUBLE_EQ(values.number("tpot_p50_ms", row), 2.0);
        EXPECT_DOUBLE_EQ(values.number("per_token_p99_ms", row), 2.0);
        EXPECT_DOUBLE_EQ(values.number("e2e_p50_ms", row), 18.0);
        EXPECT_NEAR(values.number("prefill_tokens_per_s", row), batch * input / 0.010, 1e-6);
        EXPECT_NEAR(values.number("decode_tokens_per_s", row), batch * 4 / 0.008, 1e-6);
        EXPECT_EQ(values.at("joules_per_token", row), "not measured");
        // The H200's datasheet bandwidth bounds decode: a known fraction, in percent, with its bound beside it.
        const double pct = values.number("decode_bound_pct", row);
        EXPECT_GT(pct, 0);
        EXPECT_LT(pct, 100);
        EXPECT_NEAR(values.number("decode_tokens_per_s_bound", row) * pct / 100, batch * 4 / 0.008, 1e-6);
        EXPECT_GT(values.number("ttft_floor_pct", row), 0);
        EXPECT_THAT(values.at("decode_bound_from", row), ::testing::HasSubstr("datasheet"));
        EXPECT_NEAR(values.number("tpot_floor_ms", row), 1e3 / values.number("decode_ceiling_steps_per_s", row), 1e-9);
    }
    // The same table as text beside summary.md, as `inferbench summary` prints it.
    for (const char* name : {"generation.md", "generation.csv", "generation.json"}) EXPECT_TRUE(wrote(report, name)) << name;
    const std::string csv = testing::read_text(options_.out_dir / "generation.csv");
    EXPECT_NE(csv.find("ttft_p50_ms"), std::string::npos);
    EXPECT_EQ(testing::count(csv, "\nllama-tiny") + testing::count(csv, ",llama-tiny,"), 4u);
    const auto run = run_captured({"python3", INFERBENCH_CHECK_XLSX, book.string()}, std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.out << run.err;
    // TTFT and TPOT against batch size for the two series with TPOT; decode tokens/s likewise; each with its bound.
    EXPECT_THAT(run.out, ::testing::HasSubstr("sheets Generation=5x"));
    EXPECT_THAT(run.out, ::testing::HasSubstr("Definitions="));
    EXPECT_THAT(run.out, ::testing::HasSubstr("; charts 3;"));
}

TEST_F(GenerationReport, StepsSheetHasEveryStepOfEveryGenerationAndGoesOnPastTheRowLimit) {
    testing::write_generation_fixture(db());
    options_.excel_options.max_rows_per_sheet = 41;  // 40 steps a sheet
    const auto report = run_report(db(), false);
    ASSERT_TRUE(wrote(report, "generation-steps.xlsx"));
    const auto book = options_.out_dir / "generation-steps.xlsx";
    // 3 benchmarks x 4 generations x 5 steps + 4 generations x 1 step = 64 rows: two sheets.
    const auto first = sheet_values(zip_member(book, "xl/worksheets/sheet1.xml"));
    const auto second = sheet_values(zip_member(book, "xl/worksheets/sheet2.xml"));
    EXPECT_EQ(first.rows(), 40);
    EXPECT_EQ(second.rows(), 24);
    EXPECT_EQ(zip_member(book, "xl/workbook.xml").find("Generation steps (2)") != std::string::npos, true);
    // The first benchmark (batch 1, 16 input tokens): its generation 0's prefill then decode steps.
    EXPECT_EQ(first.at("benchmark", 1), "llama-tiny / llamacpp / fp16 / cuda:0, batch 1 in 16 out 5");
    EXPECT_EQ(first.at("generation", 1), "0");
    EXPECT_EQ(first.at("step", 1), "0");
    EXPECT_DOUBLE_EQ(first.number("step_ms", 1), 10.0);
    EXPECT_DOUBLE_EQ(first.number("since_generation_start_ms", 1), 10.0);
    EXPECT_EQ(first.at("step", 3), "2");
    EXPECT_DOUBLE_EQ(first.number("step_ms", 3), 2.0);
    EXPECT_DOUBLE_EQ(first.number("since_generation_start_ms", 3), 14.0);
    // KV cache after step 2: batch 1 x (16 + 2) tokens x 256 B.
    EXPECT_DOUBLE_EQ(first.number("kv_cache_MiB", 3), 18.0 * 256 / (1024.0 * 1024.0));
    EXPECT_EQ(first.at("generation", 6), "1");
    EXPECT_DOUBLE_EQ(first.number("since_generation_start_ms", 6), 10.0) << "each generation from its own start";
    const auto run = run_captured({"python3", INFERBENCH_CHECK_XLSX, book.string()}, std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.out << run.err;
}

TEST_F(GenerationReport, FiguresAgainstBatchAndInputLengthWithTheirBoundsAndPerTokenLatencyOverTheRun) {
    if (!gnuplot_available()) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
    testing::write_generation_fixture(db());
    const auto report = run_report(db(), true);
    const std::string cuda_series = "llama-tiny llamacpp fp16 cuda:0";
    // stem -> titles of lines it must show
    const std::map<std::string, std::vector<std::string>> expected = {
        {"ttft-vs-batch", {cuda_series + ", in 16 out 5", cuda_series + ", in 16 out 5 (TTFT floor)"}},
        {"tpot-vs-batch", {cuda_series + ", in 16 out 5", cuda_series + ", in 16 out 5 (TPOT floor)"}},
        {"decode-tokens-per-s-vs-batch", {cuda_series + ", in 16 out 5", cuda_series + ", in 16 out 5 (bandwidth bound)"}},
        {"ttft-vs-input", {cuda_series + ", batch 1 out 5", cuda_series + ", batch 1 out 5 (TTFT floor)"}},
        {"tpot-vs-input", {cuda_series + ", batch 1 out 5"}},
        {"per-token-latency-cuda_0-llama-tiny-llamacpp-fp16", {"batch 1 in 16 out 5", "batch 4 in 16 out 5", "batch 1 in 64 out 5"}},
    };
    for (const auto& [stem, lines] : expected) {
        SCOPED_TRACE(stem);
        for (const char* ext : {".png", ".svg"}) {
            ASSERT_TRUE(wrote(report, stem + ext));
            EXPECT_GT(std::filesystem::file_size(options_.out_dir / (stem + ext)), 1000u);
        }
        const std::string svg = testing::read_binary(options_.out_dir / (stem + ".svg"));
        for (const auto& line : lines) EXPECT_NE(svg.find(line), std::string::npos) << line;
    }
    const std::string decode = testing::read_binary(options_.out_dir / "decode-tokens-per-s-vs-batch.svg");
    EXPECT_EQ(decode.find("cpu, in 16 out 1"), std::string::npos) << "one output token: no decode rate to draw";
    EXPECT_NE(decode.find("decode tokens/s"), std::string::npos) << "the axis says its unit";
    const std::string per_token = testing::read_binary(options_.out_dir / "per-token-latency-cuda_0-llama-tiny-llamacpp-fp16.svg");
    EXPECT_NE(per_token.find("decode step duration (ms)"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(options_.out_dir / "per-token-latency-cpu-llama-tiny-llamacpp-fp16.svg"))
        << "a single output token has no decode step";
}

TEST_F(GenerationReport, PageHasTheGenerationTableWithEachDefinitionAndTheFigures) {
    testing::write_generation_fixture(db());
    run_report(db(), false);
    const std::string page = testing::read_text(options_.out_dir / "report.html");
    const auto section = page.find("id=\"generation\"");
    ASSERT_NE(section, std::string::npos);
    const auto table = page.find("data-table=\"generation\"", section);
    ASSERT_NE(table, std::string::npos);
    const auto table_end = page.find("</table>", table);
    const std::string rows = page.substr(table, table_end - table);
    EXPECT_EQ(testing::count(rows, "<tr><td"), 4u) << "four generative cells: the ordinary benchmark is not among them";
    EXPECT_NE(rows.find("not defined"), std::string::npos);
    // Each metric's definition on its heading (hover) and in the Definitions list (a click).
    EXPECT_NE(rows.find("data-key=\"ttft_p50_ms\" scope=\"col\" title=\"Time to first token: from the call of the "
                        "generation to the first token of every sequence in host memory"),
              std::string::npos);
    EXPECT_NE(rows.find("What vLLM and MLPerf call TPOT and AIPerf calls inter_token_latency"), std::string::npos);
    EXPECT_NE(rows.find("vLLM&#39;s ITL"), std::string::npos);
    const auto definitions = page.find("<summary>Definitions</summary>", table_end);
    ASSERT_NE(definitions, std::string::npos);
    EXPECT_NE(page.find("(end-to-end - TTFT) / (output tokens - 1)", definitions), std::string::npos);
    // The figures as the page's charts, bounds dashed; the per-token latency among its group's charts.
    for (const char* title : {"p50 TTFT against batch size", "p50 TPOT against batch size",
                              "decode tokens/s against batch size", "p50 TTFT against input tokens",
                              "per-token latency (each decode step) over the run, llama-tiny / llamacpp / fp16 / cuda:0"})
        EXPECT_NE(page.find(title), std::string::npos) << title;
    EXPECT_NE(page.find("(bandwidth bound)\",\"x\""), std::string::npos);
    EXPECT_NE(page.find("\"dashed\":true"), std::string::npos);
}

TEST_F(GenerationReport, StoreWithoutGenerativeBenchmarksGainsNothing) {
    testing::write_html_fixture(db());
    std::filesystem::create_directories(scratch_.path() / "report");
    // A workbook of an earlier report in the same folder would describe other data.
    testing::write_generation_fixture(scratch_.path() / "other.db");
    run_report(scratch_.path() / "other.db", false);
    ASSERT_TRUE(std::filesystem::exists(options_.out_dir / "generation.xlsx"));
    const auto report = run_report(db(), false);
    EXPECT_FALSE(std::filesystem::exists(options_.out_dir / "generation.xlsx"));
    EXPECT_FALSE(std::filesystem::exists(options_.out_dir / "generation-steps.xlsx"));
    for (const auto& file : report.files.written)
        EXPECT_EQ(file.filename().string().find("generation"), std::string::npos) << file;
    for (const auto& line : report.files.skipped)
        EXPECT_EQ(line.find("generation"), std::string::npos) << line;
    const std::string page = testing::read_text(options_.out_dir / "report.html");
    EXPECT_EQ(page.find("id=\"generation\""), std::string::npos);
    EXPECT_EQ(page.find("per-token latency"), std::string::npos);
}

}  // namespace
}  // namespace inferbench::report
