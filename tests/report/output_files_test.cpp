// How the report's workbooks reach the disk: at a staging name, renamed when complete, so a link planted
// at the name is replaced and a full disk (a small tmpfs mounted by the test) leaves no truncated file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "common/small_tmpfs.hpp"
#include "core/error.hpp"
#include "report/excel_report.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

namespace fs = std::filesystem;

std::string read_all(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(OutputFiles, AWorkbookReplacesALinkPlantedAtItsName) {
    inferbench::testing::ScratchDir dir;
    dir.write("victim.txt", "precious\n");
    const auto group = testing::sample_group();
    const auto file = dir.path() / ("latency-" + group.key + ".xlsx");
    fs::create_symlink(dir.path() / "victim.txt", file);
    ASSERT_TRUE(write_latency_workbook(group, file));
    EXPECT_EQ(read_all(dir.path() / "victim.txt"), "precious\n");
    EXPECT_FALSE(fs::is_symlink(file));
    EXPECT_EQ(read_all(file).substr(0, 2), "PK") << "a zip archive";
}

TEST(OutputFiles, AWorkbookThatDoesNotFitLeavesNothingAndNamesItself) {
    inferbench::testing::ScratchDir dir;
    inferbench::testing::SmallTmpfs disk(dir.path() / "disk", "8k");
    if (!disk.mounted()) GTEST_SKIP() << disk.reason();
    auto group = testing::sample_group();
    const auto file = disk.path() / ("summary-" + group.key + ".xlsx");
    try {
        write_summary_workbook(group, file);
        FAIL() << "expected the disk to be full";
    } catch (const EnvironmentError& e) {
        EXPECT_THAT(e.what(), ::testing::StartsWith("cannot write " + file.string() + ": "));
        EXPECT_THAT(e.what(), ::testing::HasSubstr("No space left on device"));
    }
    EXPECT_TRUE(fs::is_empty(disk.path())) << "no truncated workbook, no staging folder";
}

}  // namespace
}  // namespace inferbench::report
