// `inferbench report` end to end: a real run, then the folder it writes; filter errors are one line.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/process/subprocess.hpp"
#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

using ScratchDir = testing::CliScratch;

std::uintmax_t size_of(const ScratchDir& dir, const std::string& name) {
    std::error_code ignored;
    const auto size = std::filesystem::file_size(dir.path() / name, ignored);
    return ignored ? 0 : size;
}

TEST(CliReport, WritesTablesWorkbooksFiguresAndThePage) {
    if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
    ScratchDir dir;
    const auto run = dir.run(
        "run --backend null --model null --batch 1,2 --duration 300ms --warmup 10ms "
        "--max-iterations 5000 --db r.db");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    const auto r = dir.run("report --db r.db --out rep --image-format png,svg --width 800 --height 500");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    // Where the files went and a headline: the table is in them, not printed again.
    EXPECT_EQ(r.out.find("null   null"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("2 benchmarks: 2 ok\n"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("report: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("open rep/report.html"), std::string::npos) << r.out;
    for (const std::string name :
         {"summary.md", "summary.csv", "summary.json", "latency-cpu-null-null-fp32.xlsx",
          "summary-cpu-null-null-fp32.xlsx", "e2e-latency-over-time-cpu-null-null-fp32.png",
          "e2e-latency-over-time-cpu-null-null-fp32.svg", "mean-latency-vs-batch-cpu-null-null-fp32.png",
          "throughput-vs-batch-cpu-null-null-fp32.svg", "throughput-vs-latency-cpu-null.png", "report.html"}) {
        EXPECT_GT(size_of(dir, "rep/" + name), 0u) << name;
    }
    EXPECT_GT(size_of(dir, "rep/latency-cpu-null-null-fp32.xlsx"), 10'000u) << "two sheets of 5000 rows";
    // A workbook without data is not written, and the output says so.
    if (size_of(dir, "rep/gpu-cpu-null-null-fp32.xlsx") == 0) {
        EXPECT_NE(r.out.find("skipped gpu-cpu-null-null-fp32.xlsx: no GPU samples stored"), std::string::npos) << r.out;
    }

    const auto doc = nlohmann::json::parse(testing::read_file(dir.path() / "rep/summary.json"));
    EXPECT_EQ(doc.at("schema_version"), 2);
    ASSERT_EQ(doc.at("rows").size(), 2u);
    EXPECT_EQ(doc["rows"][0]["run_id"], 1) << "each row says where it comes from";
    EXPECT_TRUE(doc["rows"][0].contains("p999_ms"));
    EXPECT_EQ(doc["rows"][1]["batch_size"], 2);
    EXPECT_EQ(testing::read_file(dir.path() / "rep/summary.csv").substr(0, 50),
              "benchmark_ids,model,backend,device,precision,batch");

    if (find_program("unzip")) {
        const auto workbook = run_captured(
            {"unzip", "-p", (dir.path() / "rep/latency-cpu-null-null-fp32.xlsx").string(), "xl/workbook.xml"});
        EXPECT_NE(workbook.out.find("<sheet name=\"batch 1\""), std::string::npos) << workbook.out;
        EXPECT_NE(workbook.out.find("<sheet name=\"batch 2\""), std::string::npos);
    }
}

TEST(CliReport, FiltersNarrowAndPartsCanBeLeftOut) {
    ScratchDir dir;
    ASSERT_EQ(dir.run("run --backend null --model null --batch 1,2 --duration 50ms --warmup 0s --max-iterations 500 "
                      "--db r.db")
                  .exit_code,
              0);
    const auto r = dir.run("report --db r.db --out rep --frameworks null --batches 2 --no-excel --no-plots --no-html");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto quiet = dir.run("report --db r.db --out rep2 --no-excel --no-plots --no-html --quiet");
    ASSERT_EQ(quiet.exit_code, 0) << quiet.err;
    EXPECT_EQ(quiet.out, "");
    const auto doc = nlohmann::json::parse(testing::read_file(dir.path() / "rep/summary.json"));
    ASSERT_EQ(doc.at("rows").size(), 1u);
    EXPECT_EQ(doc["rows"][0]["batch_size"], 2);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "rep/latency-cpu-null-null-fp32.xlsx"));
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "rep/report.html"));
}

// --format names the table format everywhere; report's figures moved to --image-format, and the old
// spelling still draws them, with one line saying so.
TEST(CliReport, ImageFormatNamesTheFiguresAndTheOldSpellingStillWorksWithAWarning) {
    if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
    ScratchDir dir;
    ASSERT_EQ(dir.run("run --backend null --model null --batch 1 --duration 20ms --warmup 0s --max-iterations 100 "
                      "--db r.db")
                  .exit_code,
              0);
    const std::string figure = "/throughput-vs-batch-cpu-null-null-fp32";
    const auto svg = dir.run("report --db r.db --out new --image-format svg --no-excel --no-html");
    ASSERT_EQ(svg.exit_code, 0) << svg.err;
    EXPECT_EQ(svg.err, "");
    EXPECT_GT(size_of(dir, "new" + figure + ".svg"), 0u);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / ("new" + figure + ".png")));

    const auto old = dir.run("report --db r.db --out old --format png --no-excel --no-html");
    ASSERT_EQ(old.exit_code, 0) << old.err;
    EXPECT_EQ(old.err,
              "inferbench: warning: report --format is now --image-format; the old spelling still works for "
              "figures but will go away\n");
    EXPECT_GT(size_of(dir, "old" + figure + ".png"), 0u);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / ("old" + figure + ".svg")));

    const auto both = dir.run("report --db r.db --out both --format png --image-format svg");
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_EQ(both.err,
              "inferbench: error: report --format and --image-format: both name the figure formats; give only "
              "--image-format\n");
    const auto bad_old = dir.run("report --db r.db --out bad --format gif");
    EXPECT_EQ(bad_old.exit_code, 2);
    EXPECT_NE(bad_old.err.find("inferbench: error: --format gif: unknown image format"), std::string::npos)
        << bad_old.err;

    // roofline draws figures too and takes both spellings the same way.
    EXPECT_EQ(dir.run("roofline --db r.db --image-format svg").err, "");
    EXPECT_EQ(dir.run("roofline --db r.db --format svg").err,
              "inferbench: warning: roofline --format is now --image-format; the old spelling still works for "
              "figures but will go away\n");

    const auto help = dir.run("report --help");
    EXPECT_NE(help.out.find("--image-format"), std::string::npos) << help.out;
    EXPECT_EQ(help.out.find("--format"), std::string::npos) << "the old spelling is not offered: " << help.out;
}

TEST(CliReport, BadFiltersGiveOneLineAndExitCodeTwo) {
    ScratchDir dir;
    ASSERT_EQ(dir.run("run --backend null --model null --batch 1 --duration 20ms --warmup 0s --max-iterations 100 "
                      "--db r.db")
                  .exit_code,
              0);
    const auto model = dir.run("report --db r.db --out rep --model resnet50");
    EXPECT_EQ(model.exit_code, 2);
    EXPECT_EQ(model.err, "inferbench: error: --model resnet50: not found in run 1 of r.db; it has: null\n");
    const auto run = dir.run("report --db r.db --out rep --run 9");
    EXPECT_EQ(run.exit_code, 2);
    EXPECT_EQ(run.err,
              "inferbench: error: --run 9: r.db has no run 9; it has runs 1 (`inferbench summary --runs` "
              "lists them)\n");
    const auto format = dir.run("report --db r.db --out rep --image-format gif");
    EXPECT_EQ(format.exit_code, 2);
    EXPECT_EQ(format.err, "inferbench: error: --image-format gif: unknown image format; valid choices: png, svg\n");
    const auto batch = dir.run("report --db r.db --out rep --batch 0");
    EXPECT_EQ(batch.exit_code, 2);
    EXPECT_EQ(batch.err, "inferbench: error: --batch 0: '0' is not a batch size (a whole number from 1 to 65536)\n");
    const auto missing = dir.run("report --db missing.db");
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("missing.db: no results database here"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / "rep")) << "nothing is written for bad input";
}

}  // namespace
}  // namespace inferbench
