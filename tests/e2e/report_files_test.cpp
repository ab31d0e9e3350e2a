// How `inferbench report` leaves its folder: on a full disk (a small tmpfs the test mounts) no empty or
// truncated file and an error naming the file that failed; links planted in --out replaced, never
// written through; names a spreadsheet would run as formulas kept as text.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/small_tmpfs.hpp"
#include "core/process/subprocess.hpp"
#include "e2e/cli_harness.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const std::string kTrt10 = std::string(INFERBENCH_FIXTURES_DIR) + "/trtexec/trt10-resnet50-summary.log";

// What is wrong with one file the report left, or nothing.
std::string problem_of(const fs::path& file) {
    if (fs::is_directory(fs::symlink_status(file))) return "a folder left behind";
    const std::string content = testing::read_file(file);
    if (content.empty()) return "empty";
    const std::string ext = file.extension().string();
    if (ext == ".png" && !content.ends_with(std::string_view("IEND\xae\x42\x60\x82", 8))) return "truncated PNG";
    if (ext == ".svg" && content.find("</svg>", content.size() > 64 ? content.size() - 64 : 0) == std::string::npos)
        return "truncated SVG";
    if (ext == ".html" && content.find("</html>") == std::string::npos) return "truncated HTML";
    if (ext == ".xlsx" && find_program("unzip") && !run_captured({"unzip", "-tq", file.string()}).status.success())
        return "broken workbook";
    return {};
}

class ReportFiles : public ::testing::Test {
protected:
    void SetUp() override {
        if (!find_program("gnuplot")) GTEST_SKIP() << "gnuplot not installed (scripts/setup.sh installs gnuplot-nox)";
        const auto run = dir_.run(
            "run --backend null --model null --batch 1,2 --duration 200ms --warmup 10ms --max-iterations 3000 "
            "--db r.db");
        ASSERT_EQ(run.exit_code, 0) << run.err;
    }
    testing::CliScratch dir_;
};

// Each size runs out at another file (a table, a workbook, a PNG, an SVG, the page); whatever it is,
// what is left is whole and the one error line names the file that is not there.
TEST_F(ReportFiles, AFullDiskLeavesOnlyWholeFilesAndNamesTheOneThatFailed) {
    int failures = 0;
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"8k", ""}, {"48k", ""}, {"16k", "--no-excel"}, {"100k", "--no-excel"}, {"300k", "--no-excel"},
        {"600k", "--no-excel"}, {"4m", ""}};
    for (const auto& [size, flags] : cases) {
        SCOPED_TRACE("tmpfs of " + size + " " + flags);
        const fs::path out = dir_.path() / ("rep-" + size + flags);
        testing::SmallTmpfs disk(out, size);
        if (!disk.mounted()) GTEST_SKIP() << disk.reason();
        const auto r = dir_.run("report --db r.db --out '" + out.string() + "' --image-format png,svg " + flags);
        for (const auto& entry : fs::directory_iterator(out))
            EXPECT_EQ(problem_of(entry.path()), "") << entry.path();
        if (r.exit_code == 0) continue;
        ++failures;
        EXPECT_EQ(r.exit_code, 1) << r.err;
        const std::string prefix = "inferbench: error: cannot write " + out.string() + "/";
        ASSERT_THAT(r.err, ::testing::StartsWith(prefix));
        const std::string named = r.err.substr(prefix.size());
        const std::string file = named.substr(0, named.find(':'));
        EXPECT_FALSE(fs::exists(out / file)) << "the named file is the one missing: " << file;
        EXPECT_FALSE(file.starts_with(".")) << "the file's own name, not where it was staged: " << file;
        EXPECT_THAT(r.err, HasSubstr("No space left on device"));
        EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
    // The figures' sizes vary a little with the telemetry; the four smallest disks always run out.
    EXPECT_GE(failures, 4);
}

TEST_F(ReportFiles, LinksPlantedInTheFolderAreReplacedNotWrittenThrough) {
    fs::create_directory(dir_.path() / "rep");
    const std::vector<std::string> planted = {"summary.csv", "summary.json", "report.html",
                                              "latency-cpu-null-null-fp32.xlsx",
                                              "throughput-vs-batch-cpu-null-null-fp32.png"};
    for (const auto& name : planted) {
        dir_.write("victim-" + name, "precious\n");
        fs::create_symlink(dir_.path() / ("victim-" + name), dir_.path() / "rep" / name);
    }
    const auto r = dir_.run("report --db r.db --out rep --image-format png");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& name : planted) {
        EXPECT_EQ(testing::read_file(dir_.path() / ("victim-" + name)), "precious\n") << name;
        EXPECT_FALSE(fs::is_symlink(dir_.path() / "rep" / name)) << name;
        EXPECT_EQ(problem_of(dir_.path() / "rep" / name), "") << name;
    }
}

TEST_F(ReportFiles, ALinkToAFolderAtAnOutputNameIsRefused) {
    fs::create_directories(dir_.path() / "rep");
    fs::create_directory(dir_.path() / "elsewhere");
    fs::create_directory_symlink(dir_.path() / "elsewhere", dir_.path() / "rep/summary.md");
    const auto r = dir_.run("report --db r.db --out rep --no-plots --no-excel --no-html");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "inferbench: error: cannot write rep/summary.md: a link to a directory is in its place; remove "
                     "it or write elsewhere\n");
    EXPECT_TRUE(fs::is_empty(dir_.path() / "elsewhere"));
}

TEST(ReportCsv, AModelNamedLikeAFormulaStaysText) {
    testing::CliScratch dir;
    ASSERT_EQ(dir.run("import trtexec '" + kTrt10 + "' --model '=1+1|x.onnx' --db r.db").exit_code, 0);
    const auto r = dir.run("report --db r.db --out rep --no-plots --no-excel --no-html");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string csv = testing::read_file(dir.path() / "rep/summary.csv");
    EXPECT_THAT(csv, HasSubstr("\n1,'=1+1|x.onnx,trtexec,cuda:0,"));
    EXPECT_THAT(testing::read_file(dir.path() / "rep/summary.json"), HasSubstr("\"model\": \"=1+1|x.onnx\""))
        << "JSON is not a spreadsheet: the name as it is";
}

}  // namespace
}  // namespace inferbench
