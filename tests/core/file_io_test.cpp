// Inputs read only as regular files; outputs complete or absent, never written through a link, also on
// a full disk (a small tmpfs mounted by the test).
#include "core/file_io.hpp"

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <iterator>
#include <vector>

#include "common/scratch_dir.hpp"
#include "common/small_tmpfs.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string read_all(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Everything in `dir`, hidden entries included: the staging folders must not outlive their writes.
std::vector<std::string> entries(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
}

std::string error_of(const std::function<void()>& action) {
    try {
        action();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "no error";
}

TEST(ReadRegularFile, ReadsTheWholeFile) {
    testing::ScratchDir dir;
    dir.write("log.txt", std::string(200'000, 'x') + "end");
    EXPECT_EQ(read_regular_file(dir.path() / "log.txt"), std::string(200'000, 'x') + "end");
}

TEST(ReadRegularFile, NamesWhatIsNotARegularFile) {
    testing::ScratchDir dir;
    fs::create_directory(dir.path() / "logs");
    ASSERT_EQ(::mkfifo((dir.path() / "pipe").c_str(), 0600), 0);
    EXPECT_THROW(read_regular_file(dir.path() / "logs"), UserError);
    EXPECT_EQ(error_of([&] { read_regular_file(dir.path() / "logs"); }), dir.file("logs") + " is a directory");
    // A FIFO without a writer would block a plain open: it is refused at once.
    EXPECT_EQ(error_of([&] { read_regular_file(dir.path() / "pipe"); }),
              dir.file("pipe") + " is a FIFO, not a regular file");
    EXPECT_EQ(error_of([&] { read_regular_file(dir.path() / "absent.log"); }),
              dir.file("absent.log") + ": cannot read: No such file or directory");
}

TEST(OutputFile, WritesCompleteFilesAndLeavesNoStagingFolder) {
    testing::ScratchDir dir;
    write_file_atomically(dir.path() / "summary.csv", "a,b\n1,2\n");
    write_file_atomically(dir.path() / "summary.csv", "a,b\n3,4\n");
    EXPECT_EQ(read_all(dir.path() / "summary.csv"), "a,b\n3,4\n");
    EXPECT_THAT(entries(dir.path()), ::testing::ElementsAre("summary.csv"));
}

TEST(OutputFile, NothingIsLeftWithoutCommit) {
    testing::ScratchDir dir;
    {
        OutputFile output(dir.path() / "figure.png");
        EXPECT_EQ(output.staging_path().filename(), "figure.png");
        EXPECT_EQ(output.staging_path().parent_path().parent_path(), dir.path());
        struct stat folder {};
        ASSERT_EQ(::stat(output.staging_path().parent_path().c_str(), &folder), 0);
        EXPECT_EQ(folder.st_mode & 0777, 0700u) << "no other user can plant anything in the staging folder";
        output.write("half a figure");
    }
    EXPECT_TRUE(entries(dir.path()).empty());
}

TEST(OutputFile, ALinkAtTheFinalNameIsReplacedNotFollowed) {
    testing::ScratchDir dir;
    dir.write("victim.txt", "precious\n");
    fs::create_directory(dir.path() / "out");
    fs::create_symlink(dir.path() / "victim.txt", dir.path() / "out/summary.md");
    fs::create_symlink(dir.path() / "nowhere", dir.path() / "out/summary.json");  // dangling
    write_file_atomically(dir.path() / "out/summary.md", "table\n");
    write_file_atomically(dir.path() / "out/summary.json", "{}\n");
    EXPECT_EQ(read_all(dir.path() / "victim.txt"), "precious\n");
    EXPECT_FALSE(fs::is_symlink(dir.path() / "out/summary.md"));
    EXPECT_EQ(read_all(dir.path() / "out/summary.md"), "table\n");
    EXPECT_FALSE(fs::exists(dir.path() / "nowhere"));
    EXPECT_EQ(read_all(dir.path() / "out/summary.json"), "{}\n");
}

TEST(OutputFile, ADirectoryOrALinkToOneAtTheFinalNameIsRefused) {
    testing::ScratchDir dir;
    fs::create_directories(dir.path() / "out/report.html");
    fs::create_directory(dir.path() / "elsewhere");
    fs::create_directory_symlink(dir.path() / "elsewhere", dir.path() / "out/summary.csv");
    EXPECT_EQ(error_of([&] { write_file_atomically(dir.path() / "out/report.html", "<html>"); }),
              "cannot write " + dir.file("out/report.html") +
                  ": a directory is in its place; remove it or write elsewhere");
    EXPECT_EQ(error_of([&] { write_file_atomically(dir.path() / "out/summary.csv", "a\n"); }),
              "cannot write " + dir.file("out/summary.csv") +
                  ": a link to a directory is in its place; remove it or write elsewhere");
    EXPECT_TRUE(fs::is_empty(dir.path() / "elsewhere"));
    EXPECT_THAT(entries(dir.path() / "out"), ::testing::ElementsAre("report.html", "summary.csv"));
}

TEST(OutputFile, StagingFoldersAKilledWriterLeftAreRemovedOnceStale) {
    testing::ScratchDir dir;
    for (const char* name : {".inferbench-tmp-old", ".inferbench-tmp-live", "kept"}) {
        fs::create_directory(dir.path() / name);
        dir.write(std::string(name) + "/figure.png", "half");
    }
    const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
    fs::last_write_time(dir.path() / ".inferbench-tmp-old", two_hours_ago);
    fs::last_write_time(dir.path() / "kept", two_hours_ago);
    remove_stale_staging(dir.path());
    EXPECT_THAT(entries(dir.path()), ::testing::ElementsAre(".inferbench-tmp-live", "kept"));
}

class FullDisk : public ::testing::Test {
protected:
    void SetUp() override {
        if (!disk_.mounted()) GTEST_SKIP() << disk_.reason();
    }
    testing::ScratchDir scratch_;
    testing::SmallTmpfs disk_{scratch_.path() / "disk", "64k"};
};

TEST_F(FullDisk, AFileThatDoesNotFitIsNotLeftTruncatedAndTheErrorNamesIt) {
    const fs::path file = disk_.path() / "summary.json";
    write_file_atomically(file, "the earlier report\n");
    const std::string error = error_of([&] { write_file_atomically(file, std::string(256 * 1024, 'x')); });
    EXPECT_EQ(error, "cannot write " + file.string() + ": No space left on device");
    EXPECT_EQ(read_all(file), "the earlier report\n") << "the earlier file stays whole";
    EXPECT_THAT(entries(disk_.path()), ::testing::ElementsAre("summary.json"));
}

}  // namespace
}  // namespace inferbench
