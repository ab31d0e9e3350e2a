// Golden tests: every printer's exact output for one summary. Regenerate a golden file only on
// purpose: INFERBENCH_UPDATE_GOLDEN=1 build/release/tests/report/report_tests
#include "report/summary_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace inferbench::report {
namespace {

std::vector<analysis::BenchmarkSummary> sample_summaries() {
    analysis::BenchmarkSummary ok;
    ok.benchmark.model = "resnet50";
    ok.benchmark.backend = "onnxruntime";
    ok.benchmark.device = "cpu";
    ok.benchmark.precision = "fp32";
    ok.benchmark.batch_size = 8;
    ok.benchmark.status = BenchmarkStatus::ok;
    ok.benchmark.load_ns = 312'400'000;
    ok.benchmark.model_size_bytes = 102'530'000;
    ok.model.parameters = 25'557'032;
    ok.model.flops_per_inference = 8.2e9;
    ok.e2e.count = 120;
    ok.e2e.mean = 190'250'000;
    ok.e2e.p50 = 189'000'000;
    ok.e2e.p90 = 195'500'000;
    ok.e2e.p99 = 201'125'000;
    ok.e2e.cv_pct = 2.25;
    ok.throughput_per_s = 42.05;

    analysis::BenchmarkSummary skipped;
    skipped.benchmark.model = "bert, \"large\" | <b>";
    skipped.benchmark.backend = "tensorrt";
    skipped.benchmark.device = "cuda:0";
    skipped.benchmark.precision = "int8";
    skipped.benchmark.batch_size = 1;
    skipped.benchmark.status = BenchmarkStatus::skipped;
    skipped.benchmark.reason = "backend tensorrt is not built";

    analysis::BenchmarkSummary null_run = ok;
    null_run.benchmark.model = "null";
    null_run.benchmark.backend = "null";
    null_run.e2e.mean = 48.4;
    null_run.e2e.p50 = 40;
    null_run.e2e.p90 = 60;
    null_run.e2e.p99 = 812'400;
    null_run.warnings = {"latency is unstable"};
    null_run.e2e.min = 30;
    null_run.e2e.max = 900'000;
    null_run.e2e.stdev = 7'000;
    null_run.e2e.p95 = 80;
    null_run.e2e.p999 = 850'000;
    // GPU telemetry of the first row: no energy counter (integrated power), SW power cap 12.5% of the time.
    ok.telemetry.gpu_samples = 40;
    ok.telemetry.mean_power_w = 312.46;
    ok.telemetry.energy_source = "integrated power";
    ok.telemetry.joules_per_inference = 0.7431;
    ok.telemetry.inferences_per_joule = 1.3457;
    ok.telemetry.mean_sm_clock_mhz = 1912.5;
    ok.telemetry.throttled = {{"sw_power_cap", 0.125}};
    ok.telemetry.max_temperature_c = 67;
    ok.telemetry.peak_fb_used_mib = 20481.5;
    ok.telemetry.mean_process_cpu_pct = 101.25;
    ok.telemetry.peak_rss_mib = 1536.4;
    // Where the row comes from and how it was measured, for the exports.
    ok.benchmark.run_id = 3;
    ok.benchmark.backend_version = "1.20.1";
    ok.run = {1'764'000'000'000, "gpu01", "AMD EPYC 9654", {}};
    ok.settings.warmup_ns = 1'000'000'000;
    ok.settings.duration_ns = 10'000'000'000;
    ok.settings.max_iterations = 100'000;
    ok.e2e.min = 180'000'000;
    ok.e2e.max = 250'500'000;
    ok.e2e.stdev = 4'280'625;
    ok.e2e.p95 = 198'000'000;
    ok.e2e.p999 = 240'000'000;
    // Costs that are not totals: nodes the cost model could not cost, sizes that depend on the data.
    analysis::BenchmarkSummary partial = ok;
    partial.benchmark.model = "vit.onnx";
    partial.model.flops_per_inference = 0.48e9;
    partial.model.cost_unknown_nodes = 642;
    partial.model.cost_data_dependent_nodes = 0;
    analysis::BenchmarkSummary detector = ok;
    detector.benchmark.model = "fasterrcnn.onnx";
    detector.model.flops_per_inference = 5.7459e9;
    detector.model.cost_unknown_nodes = 0;
    detector.model.cost_data_dependent_nodes = 277;
    return {ok, skipped, null_run, partial, detector};
}

std::size_t widest_line(const std::string& text) {
    std::size_t widest = 0, start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        widest = std::max(widest, display_width(text.substr(start, end - start)));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return widest;
}

std::size_t occurrences_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

std::string golden(const std::string& name, const std::string& actual) {
    const std::string path = std::string(INFERBENCH_GOLDEN_DIR) + "/" + name;
    if (std::getenv("INFERBENCH_UPDATE_GOLDEN")) std::ofstream(path) << actual;
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(SummaryTable, AProfiledRunsCheckIsNotedBesideItsBenchmark) {
    auto summaries = sample_summaries();
    summaries[0].profile_check = {20, 4'910'000, 4'890'000, 1.004};
    const auto csv = render(summary_table(summaries), Format::csv);
    EXPECT_NE(csv.find("the runtime's profiler 4.910 ms per run vs CUDA events 4.890 ms over the same 20 runs (+0.4%)"),
              std::string::npos)
        << csv;
}

TEST(SummaryGolden, Text) {
    const auto text = render(summary_table(sample_summaries()), Format::text);
    EXPECT_EQ(text, golden("summary.txt", text));
}

TEST(SummaryGolden, Markdown) {
    const auto text = render(summary_table(sample_summaries()), Format::markdown);
    EXPECT_EQ(text, golden("summary.md", text));
    EXPECT_NE(text.find("bert, \"large\" \\| <b>"), std::string::npos) << "pipes are escaped";
}

TEST(SummaryGolden, Csv) {
    const auto text = render(summary_table(sample_summaries()), Format::csv);
    EXPECT_EQ(text, golden("summary.csv", text));
    EXPECT_NE(text.find("\"bert, \"\"large\"\" | <b>\""), std::string::npos) << "CSV quoting";
}

TEST(SummaryGolden, Json) {
    const auto text = render(summary_table(sample_summaries()), Format::json);
    EXPECT_EQ(text, golden("summary.json", text));
    EXPECT_NE(text.find("\"schema_version\": 2"), std::string::npos);
    EXPECT_NE(text.find("\"mean_ms\": 190.25"), std::string::npos);
    EXPECT_NE(text.find("\"mean_ms\": null"), std::string::npos) << "a skipped cell has no latency";
}

TEST(TableWidth, FitsTheTerminalWidth) {
    const auto table = summary_table(sample_summaries());
    const auto text = render(table, Format::text, {.columns = {}, .width = 120});
    EXPECT_LE(widest_line(text), 120u) << text;
    // Notes move below the table, each once; the columns left out are named, in the table's order.
    EXPECT_NE(text.find("[1] throttled by SW power cap; energy from integrated power"), std::string::npos) << text;
    EXPECT_NE(text.find("[2] backend tensorrt is not built"), std::string::npos) << text;
    // The identity columns stay (device and precision tell these rows apart), and so do the headline figures.
    EXPECT_NE(text.find("columns left out to fit 120 characters: status, convergence, cv_pct, load_ms,"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(" 189.00 ms  195.50 ms  201.12 ms   42.0  [1]"), std::string::npos)
        << "p50, p90, p99 kept at 120\n" << text;
    EXPECT_NE(text.find("\nfasterrcnn.onnx    onnxruntime  cpu     fp32"), std::string::npos)
        << "the model column narrowed to its longest word\n" << text;
    for (const std::size_t width : {110u, 140u, 200u})
        EXPECT_LE(widest_line(render(table, Format::text, {.columns = {}, .width = width})), width) << width;
    // At 60 even the columns that may not go do not fit: the table continues below, each part headed
    // by the model, which alone tells these rows apart; nothing of them is left out.
    const auto narrow = render(table, Format::text, {.columns = {}, .width = 60});
    EXPECT_LE(widest_line(narrow), 60u) << narrow;
    EXPECT_TRUE(narrow.starts_with("model            backend      device  precision  batch\n")) << narrow;
    EXPECT_NE(narrow.find("\nmodel            p99        inf/s  note\n"), std::string::npos) << narrow;
    EXPECT_EQ(narrow.find("left out to fit 60 characters: iterations"), std::string::npos) << narrow;
    // Unlimited: every shown column in full, the note inline.
    const auto wide = render(table, Format::text);
    EXPECT_NE(wide.find("latency is unstable"), std::string::npos);
    EXPECT_EQ(wide.find("[1]"), std::string::npos);
}

// The sweep of issue 32: two rows that differ only in their options, on a CPU.
std::vector<analysis::BenchmarkSummary> thread_sweep() {
    analysis::BenchmarkSummary one;
    one.benchmark.benchmark_id = 7;
    one.benchmark.model = "mobilenet";
    one.benchmark.backend = "onnxruntime";
    one.benchmark.device = "cpu";
    one.benchmark.precision = "fp32";
    one.benchmark.batch_size = 1;
    one.benchmark.variant = "intra_op_threads=1";
    one.benchmark.status = BenchmarkStatus::ok;
    one.benchmark.load_ns = 212'000'000;
    one.benchmark.model_size_bytes = 14'000'000;
    one.model.parameters = 3'504'872;
    one.model.flops_per_inference = 0.6e9;
    one.e2e = {.count = 345, .mean = 14'430'000, .cv_pct = 4.5, .p50 = 14'100'000, .p90 = 15'200'000, .p99 = 17'900'000};
    one.ci.mean = Interval{14'300'000, 14'560'000};
    one.throughput_per_s = 69.3;
    one.telemetry.mean_process_cpu_pct = 99.5;
    one.telemetry.peak_rss_mib = 212.5;
    analysis::BenchmarkSummary two = one;
    two.benchmark.benchmark_id = 8;
    two.benchmark.variant = "intra_op_threads=2";
    two.e2e = {.count = 162, .mean = 30'930'000, .cv_pct = 3.1, .p50 = 30'100'000, .p90 = 32'000'000, .p99 = 35'500'000};
    two.throughput_per_s = 32.3;
    return {one, two};
}

std::string first_line(const std::string& text, const std::string& starting) {
    const auto at = text.find("\n" + starting);
    if (at == std::string::npos) return "";
    return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

TEST(TableWidth, ConstantColumnsAreSaidAboveAndTheColumnTellingRowsApartStays) {
    const auto text = render(summary_table(thread_sweep()), Format::text, {.columns = {}, .width = 100});
    EXPECT_LE(widest_line(text), 100u) << text;
    EXPECT_TRUE(text.starts_with("model: mobilenet · backend: onnxruntime · device: cpu · precision: fp32 · batch: 1 · "
                                 "status: ok"))
        << text;
    const std::string header = first_line("\n" + text, "id ");
    EXPECT_NE(header.find("options"), std::string::npos) << text;
    EXPECT_NE(text.find("intra_op_threads=1"), std::string::npos) << text;
    EXPECT_NE(text.find("intra_op_threads=2"), std::string::npos) << text;
    EXPECT_EQ(header.find("device"), std::string::npos) << "said once above, not in every row\n" << text;
    // The headline figures stay at 100 columns.
    for (const char* heading : {"iters", "mean", "±95%", "p50", "p90", "p99", "inf/s"})
        EXPECT_NE(header.find(heading), std::string::npos) << heading << "\n" << text;
}

TEST(TableWidth, HeadlineFiguresAreNeverLeftOut) {
    // The GPU rows of the sample: many columns, a long model name.
    const auto text = render(summary_table(sample_summaries()), Format::text, {.columns = {}, .width = 100});
    EXPECT_LE(widest_line(text), 100u) << text;
    for (const char* heading : {"  iters", "  mean", "  p50", "  p90", "  p99", "  inf/s"})
        EXPECT_NE(text.find(heading), std::string::npos) << heading << "\n" << text;
    const auto left_out = text.substr(text.find("left out to fit"));
    for (const char* key : {"iterations", "p90_ms", "p99_ms", "p50_ms", "mean_ci95_half_ms", "throughput_per_s"})
        EXPECT_EQ(left_out.find(key), std::string::npos) << key << "\n" << text;
}

TEST(TableWidth, ATableTooWideForItsFixedColumnsContinuesBelowWithTheRowNamesRepeated) {
    const auto text = render(summary_table(thread_sweep()), Format::text, {.columns = {}, .width = 50});
    EXPECT_LE(widest_line(text), 50u) << text;
    // Two parts, each headed by the ids and options that tell the rows apart.
    std::size_t parts = 0;
    for (std::size_t at = 0; (at = text.find("\nid  options", at)) != std::string::npos; ++at) ++parts;
    EXPECT_GE(parts, 2u) << text;
    for (const char* heading : {"iters", "mean", "±95%", "p50", "p90", "p99", "inf/s"})
        EXPECT_NE(text.find(heading), std::string::npos) << heading << "\n" << text;
    EXPECT_EQ(occurrences_of(text, "intra_op_threads=2"), parts) << text;
}

TEST(TableWidth, EarlyStoppingP90OfSingleStreamStays) {
    auto rows = thread_sweep();
    for (auto& s : rows) {
        s.scenario.label = "single_stream";
        s.scenario.verdict.estimate = early_stopping::PercentileEstimate{.enough = true, .estimate_ns = 16'000'000};
        s.scenario.settings = ScenarioSettings{};
        s.scenario.settings->scenario = Scenario::single_stream;
    }
    const auto text = render(summary_table(rows), Format::text, {.columns = {}, .width = 100});
    EXPECT_NE(text.find("es p90"), std::string::npos) << text;
    EXPECT_NE(text.find("16.00 ms"), std::string::npos) << text;
}

TEST(SummaryIds, EveryRowNamesItsBenchmarksAndEachRepeatItsNumber) {
    auto rows = thread_sweep();
    rows[1].repeat_ids = {8, 11, 14};  // a cell measured three times
    const auto table = summary_table(rows);
    const auto json = nlohmann::json::parse(render(table, Format::json));
    EXPECT_EQ(json["rows"][0]["benchmark_ids"], "7");
    EXPECT_EQ(json["rows"][1]["benchmark_ids"], "8,11,14");
    EXPECT_FALSE(json["rows"][0].contains("repeat")) << "one row per cell: no repeat column";
    const auto csv = render(table, Format::csv);
    EXPECT_TRUE(csv.starts_with("benchmark_ids,model,")) << csv;
    EXPECT_NE(csv.find("\n\"8,11,14\",mobilenet,"), std::string::npos) << csv;
    EXPECT_TRUE(render(table, Format::markdown).starts_with("| id      | model     |")) << render(table, Format::markdown);
    EXPECT_TRUE(render(table, Format::text).starts_with("id       model")) << render(table, Format::text);

    auto repeats = thread_sweep();
    repeats[1].benchmark.repeat = 1;
    const auto each = summary_table(repeats, SummaryRows::each_repeat);
    EXPECT_TRUE(render(each, Format::csv).starts_with("benchmark_ids,repeat,model,"));
    const auto each_json = nlohmann::json::parse(render(each, Format::json));
    EXPECT_EQ(each_json["rows"][0]["repeat"], 1);
    EXPECT_EQ(each_json["rows"][1]["repeat"], 2);
    EXPECT_TRUE(render(each, Format::text).starts_with("id  repeat  model")) << render(each, Format::text);
}

TEST(TableColumns, WithoutEmptyColumnsDropsThoseWithNoValueInAnyRow) {
    Table table{"t", {{"a", "a"}, {"power_w", "power W"}, {"b", "b"}}, {{std::int64_t{1}, Null{}, std::string("x")}}};
    const auto kept = without_empty_columns(table);
    ASSERT_EQ(kept.columns.size(), 2u);
    EXPECT_EQ(kept.columns[1].key, "b");
    EXPECT_EQ(std::get<std::string>(kept.rows[0][1]), "x");
}

TEST(TableWidth, WrapsTextColumnsAndNeverCutsAWordSilently) {
    Table table{"t", {{"name", "name"}, {"description", "description", 2, Fit::wrap}}, {}};
    table.rows.push_back({std::string("a"), std::string("one two three four five six seven eight nine ten eleven")});
    const auto text = render(table, Format::text, {.columns = {}, .width = 30});
    EXPECT_LE(widest_line(text), 30u) << text;
    EXPECT_NE(text.find("a     one two three four five"), std::string::npos) << text;
    EXPECT_NE(text.find("\n      six seven eight nine ten\n"), std::string::npos) << text;
    EXPECT_NE(text.find("eleven"), std::string::npos);
}

// `list backends` broke names mid-word ("scripts/fetch-onnxru" / "ntime.sh", "INFERBENCH_ONNXRUNTI" /
// "ME_ROOT"): a long word breaks after a '/', '-' or '_', and the column is as wide as its pieces.
TEST(TableWidth, LongNamesBreakAtTheirSeparatorsNotInsideAName) {
    Table table{"backends",
                {{"name", "name"}, {"problem", "problem", 2, Fit::wrap}},
                {{std::string("onnxruntime"),
                  std::string("not built; run scripts/fetch-onnxruntime.sh, then rebuild (or set "
                              "INFERBENCH_ONNXRUNTIME_ROOT)")},
                 {std::string("oldapi"), std::string("/work/wt/tables/build/release/test-backends/"
                                                     "libinferbench_backend_oldapi.so was built for backend API 999")}}};
    const auto text = render(table, Format::text, {.columns = {}, .width = 40});
    EXPECT_LE(widest_line(text), 40u) << text;
    for (const char* piece : {"scripts/", "fetch-", "onnxruntime.sh,", "INFERBENCH_", "ONNXRUNTIME_", "ROOT)",
                              "test-", "backends/", "libinferbench_", "oldapi.so"})
        EXPECT_NE(text.find(piece), std::string::npos) << piece << "\n" << text;
    EXPECT_EQ(text.find("onnxru\n"), std::string::npos) << text;
    EXPECT_EQ(text.find("ONNXRUNTI\n"), std::string::npos) << text;
    EXPECT_EQ(wrap_paragraph("see /usr/lib/x86_64-linux-gnu/libonnxruntime.so", 20),
              "see\n/usr/lib/x86_64-\nlinux-gnu/\nlibonnxruntime.so\n");
}

TEST(TableWidth, WrappedColumnsNarrowBelowTwentyWhenNothingIsLeftToLeaveOut) {
    Table table{"t",
                {{"name", "name"}, {"about", "about", 2, Fit::wrap}, {"problem", "problem", 2, Fit::wrap}},
                {{std::string("onnxruntime-python"), std::string("ONNX Runtime's Python package (Python runner)"),
                  std::string("ONNX Runtime not importable by python3; pip install onnxruntime")}}};
    const auto text = render(table, Format::text, {.columns = {}, .width = 50});
    EXPECT_LE(widest_line(text), 50u) << text;
    EXPECT_NE(text.find("onnxruntime-python  ONNX Runtime's"), std::string::npos) << text;
    EXPECT_NE(text.find("onnxruntime"), text.rfind("onnxruntime")) << "the problem's words all shown\n" << text;
}

TEST(TableColumns, EmptyColumnsAreHiddenInEveryFormat) {
    const auto table = summary_table(sample_summaries());
    for (const auto format : {Format::text, Format::markdown, Format::csv, Format::json}) {
        const auto text = render(table, format);
        EXPECT_EQ(text.find("gpu p50"), std::string::npos) << "no GPU compute time anywhere";
        EXPECT_EQ(text.find("gpu_compute_p50_ms"), std::string::npos);
        EXPECT_EQ(text.find("h2d"), std::string::npos);
    }
}

TEST(TableColumns, ColumnsChooseAndUnknownNamesListTheValidOnes) {
    const auto table = summary_table(sample_summaries());
    const auto text = render(table, Format::csv, {.columns = {"model", "mean_ms", "host"}, .width = 0});
    EXPECT_EQ(text.substr(0, text.find('\n')), "model,mean_ms,host");
    try {
        render(table, Format::text, {.columns = {"model", "latency"}, .width = 0});
        FAIL() << "an unknown column is an error";
    } catch (const UserError& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("--columns latency: the summary table has no such column"), std::string::npos) << what;
        EXPECT_NE(what.find("valid names: benchmark_ids, repeat, model, backend,"), std::string::npos) << what;
        EXPECT_NE(what.find("p999_ms, mean_ci95_low_ms,"), std::string::npos) << what;
        EXPECT_NE(what.find("ci_method, stop_reason, all"), std::string::npos) << what;
    }
    // `all`: the export-only columns on a terminal too, none left out for width.
    const auto all = render(table, Format::text, {.columns = {"all"}, .width = 100});
    EXPECT_NE(all.find("gpu01"), std::string::npos);
    EXPECT_EQ(all.find("left out"), std::string::npos);
}

TEST(TableExports, CarryRunSettingsAndEveryStatisticAtFullPrecision) {
    const auto csv = render(summary_table(sample_summaries()), Format::csv);
    const std::string header = csv.substr(0, csv.find('\n'));
    for (const char* key : {"run_id", "run_started_utc", "host", "device_name", "backend_version", "warmup_ms",
                            "duration_ms", "max_iterations", "min_ms", "max_ms", "stdev_ms", "p95_ms", "p999_ms"})
        EXPECT_NE(header.find(key), std::string::npos) << key;
    EXPECT_NE(csv.find(",3,2025-11-24 16:00:00,gpu01,AMD EPYC 9654,1.20.1,1000,10000,100000,180,250.5,4.280625,198,240\n"),
              std::string::npos)
        << csv;
    EXPECT_NE(csv.find(",ok,fixed,120,190.25,189,195.5,201.125,2.25,"), std::string::npos) << "no display rounding";
    // The terminal shows what it showed: rounded, no run context.
    const auto text = render(summary_table(sample_summaries()), Format::text);
    EXPECT_NE(text.find("201.12 ms"), std::string::npos);
    EXPECT_EQ(text.find("gpu01"), std::string::npos);
}

TEST(TableUnits, EnergyBelowAJouleIsShownInMillijoules) {
    const auto text = render(summary_table(sample_summaries()), Format::text);
    EXPECT_NE(text.find("mJ/inf"), std::string::npos);
    EXPECT_NE(text.find("743.1"), std::string::npos) << text;
    const auto json = render(summary_table(sample_summaries()), Format::json);
    EXPECT_NE(json.find("\"joules_per_inference\": 0.7431"), std::string::npos) << "files keep joules";
}

TEST(TableUnits, LargeFiguresShowSevenSignificantDigitsAndFilesKeepThemWhole) {
    Table table{"t", {{"throughput_per_s", "inf/s", 1}, {"ms", "ms", 3}}, {{105025468.74, 0.25}, {123456.78, 1234.5678}}};
    const auto text = render(table, Format::text);
    EXPECT_NE(text.find("105025469"), std::string::npos) << "no noise decimal on a nine-digit figure\n" << text;
    EXPECT_EQ(text.find("105025468.7"), std::string::npos) << text;
    EXPECT_NE(text.find("123456.8"), std::string::npos) << "six integer digits keep one decimal\n" << text;
    EXPECT_NE(text.find("1234.568"), std::string::npos) << "a column's decimals below seven digits\n" << text;
    EXPECT_NE(text.find("0.250"), std::string::npos) << text;
    EXPECT_NE(render(table, Format::csv).find("105025468.74"), std::string::npos) << "files keep full precision";
}

TEST(TableUnits, AFigureThatIsNotZeroNeverShowsAsZero) {
    Table table{"t", {{"pct", "%", 0}, {"ms", "ms", 2}}, {{0.0043, 0.0}, {0.6, 0.00071}}};
    const auto text = render(table, Format::text);
    EXPECT_NE(text.find("0.0043"), std::string::npos) << "two significant digits where 0 decimals would show 0\n" << text;
    EXPECT_NE(text.find("0.00071"), std::string::npos) << text;
    EXPECT_NE(text.find("   0.00\n"), std::string::npos) << "a true zero keeps the column's decimals\n" << text;
    EXPECT_NE(text.find(" 1 "), std::string::npos) << "0.6 at 0 decimals rounds to 1 as before\n" << text;
}

TEST(TerminalWidth, ColumnsVariableElsePipedDefault) {
    ::setenv("COLUMNS", "73", 1);
    EXPECT_EQ(terminal_width(-1), 73u);
    ::setenv("COLUMNS", "wide", 1);
    EXPECT_EQ(terminal_width(-1), kPipedWidth);
    ::unsetenv("COLUMNS");
    EXPECT_EQ(terminal_width(-1), kPipedWidth) << "not a terminal";
    EXPECT_EQ(fit_line("[3/12] resnet50 b8 fp32  120 iterations", 20), "[3/12] resnet50 b...");
    EXPECT_EQ(display_width("max °C"), 6u);
}

TEST(Formats, ParseNamesAndRejectOthers) {
    EXPECT_EQ(parse_format("md"), Format::markdown);
    EXPECT_EQ(parse_format("table"), Format::text);
    EXPECT_THROW(parse_format("xml"), UserError);
}

// One figure, one wording: a bound says which and why in text and Markdown, and CSV and JSON keep
// the number with the bound and the counts in their own fields.
TEST(SummaryCostBounds, PartialSumsAreLowerBoundsAndDataDependentOnesUpperBounds) {
    const auto table = summary_table(sample_summaries());
    const auto text = render(table, Format::text);
    EXPECT_NE(text.find(">=0.48 (642 nodes unknown)"), std::string::npos) << text;
    EXPECT_NE(text.find("<=5.75 (277 nodes data-dependent)"), std::string::npos) << text;
    EXPECT_EQ(text.find("cost_unknown_nodes"), std::string::npos);  // machine-only columns stay out of text
    EXPECT_EQ(text.find("unknown nodes"), std::string::npos);
    const auto json = nlohmann::json::parse(render(table, Format::json));
    const auto& partial = json["rows"][3];
    EXPECT_DOUBLE_EQ(partial["gflops_per_inference"].get<double>(), 0.48);
    EXPECT_EQ(partial["gflops_bound"], "lower");
    EXPECT_EQ(partial["cost_unknown_nodes"], 642);
    EXPECT_EQ(json["rows"][4]["gflops_bound"], "upper");
    EXPECT_EQ(json["rows"][4]["cost_data_dependent_nodes"], 277);
    EXPECT_EQ(json["rows"][0]["gflops_bound"], "total");
    EXPECT_TRUE(json["rows"][1]["gflops_bound"].is_null());  // no figure at all
    const auto csv = render(table, Format::csv);
    EXPECT_NE(csv.find(",0.48,"), std::string::npos) << csv;
    EXPECT_NE(csv.find(",lower,642,0,"), std::string::npos) << csv;
}


// Documents that hold a table beside other values (roofline --json, devices --json, models check --json)
// take the table's JSON value itself: it is what rendering the table to JSON text and reading it back gave,
// and its text is the JSON output's.
TEST(TableJson, ValueHandedOnIsWhatItsTextReadBackGave) {
    const Table every_cell{"cells",
                           {{"text", "text"}, {"count", "count"}, {"real", "real"}, {"latency_ms", "latency"},
                            {"flag", "flag"}, {"bound", "bound"}, {"empty", "empty"}},
                           {{std::string("a \"quoted\" name"), std::int64_t{-3}, 0.1 + 0.2, Duration{1234567.0}, true,
                             Annotated{0.48, ">=0.48"}, Null{}},
                            {std::string(""), std::int64_t{42}, std::nan(""), Duration{0}, false,
                             Annotated{std::nan(""), "unknown"}, Null{}}}};
    for (const Table& table : {every_cell, summary_table(sample_summaries())}) {
        const auto text = render(table, Format::json);
        EXPECT_EQ(table_json(table), nlohmann::ordered_json::parse(text)) << table.name;
        EXPECT_EQ(table_json(table).dump(2) + "\n", text) << table.name;
        // Sorted keys (models check's document) come out the same as from the text read back.
        EXPECT_EQ(nlohmann::json(table_json(table)).dump(2), nlohmann::json::parse(text).dump(2)) << table.name;
    }
    const RenderOptions chosen{.columns = {"real", "text"}};
    EXPECT_EQ(table_json(every_cell, chosen), nlohmann::ordered_json::parse(render(every_cell, Format::json, chosen)));
    EXPECT_FALSE(table_json(every_cell)["rows"][0].contains("empty"));
}

}  // namespace
}  // namespace inferbench::report
