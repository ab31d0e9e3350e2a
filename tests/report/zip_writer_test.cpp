// The workbooks' zip container read back by Debian's unzip: members as written (CRC checked), members
// larger than the buffers handed to the compressing thread, an empty member, and the archive complete
// or absent.
#include "report/zip_writer.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/process/subprocess.hpp"
#include "report/report_fixture.hpp"

namespace inferbench::report {
namespace {

// Text that compresses like a sheet's rows, but never repeats exactly.
std::string rows(std::size_t bytes) {
    std::string out;
    for (std::uint64_t i = 0; out.size() < bytes; ++i) out += "<row><c><v>" + std::to_string(i * 7919 % 100'003) + "</v></c></row>";
    out.resize(bytes);
    return out;
}

TEST(ZipWriter, MembersReadBackAsWritten) {
    if (!find_program("unzip")) GTEST_SKIP() << "reading zip files needs Debian's unzip (scripts/setup.sh)";
    inferbench::testing::ScratchDir dir;
    const auto file = dir.path() / "a.zip";
    const std::string big = rows(3 * ZipWriter::kBufferBytes + 12'345);  // several buffers, not a whole number
    {
        OutputFile output(file);
        ZipWriter zip(output);
        zip.begin("xl/worksheets/sheet1.xml");
        for (std::size_t at = 0; at < big.size(); at += 1000) zip.append(std::string_view(big).substr(at, 1000));
        zip.begin("empty.xml");
        zip.begin("types.xml");
        zip.append("<Types/>");
        zip.finish();
        output.commit();
    }
    const auto test = run_captured({"unzip", "-t", file.string()}, std::nullopt, 30'000);
    EXPECT_TRUE(test.status.success()) << test.out << test.err;
    EXPECT_THAT(test.out, ::testing::HasSubstr("No errors detected"));
    EXPECT_EQ(testing::zip_members(file),
              (std::vector<std::string>{"xl/worksheets/sheet1.xml", "empty.xml", "types.xml"}));
    EXPECT_TRUE(testing::zip_member(file, "xl/worksheets/sheet1.xml") == big) << "the big member differs";
    EXPECT_EQ(testing::zip_member(file, "empty.xml"), "");
    EXPECT_EQ(testing::zip_member(file, "types.xml"), "<Types/>");
    EXPECT_LT(std::filesystem::file_size(file), big.size() / 3) << "deflated";
}

// A member past 4 GiB (a sheet of wide rows could be one) takes the zip64 fields: Python's zipfile reads
// its size and the member after it. (Its CRC is unzip's to check; it takes a minute, so not here.)
TEST(ZipWriter, AMemberPastFourGibibytesHasZip64Sizes) {
    if (!find_program("python3")) GTEST_SKIP() << "needs python3";
    inferbench::testing::ScratchDir dir;
    const auto file = dir.path() / "big.zip";
    constexpr std::size_t kChunks = 4200;  // 4,200 MiB
    {
        OutputFile output(file);
        ZipWriter zip(output);
        zip.begin("big.bin");
        std::string chunk(std::size_t{1} << 20, 'x');
        for (std::size_t i = 0; i < kChunks; ++i) {
            chunk[0] = static_cast<char>('a' + i % 26);
            zip.append(chunk);
        }
        zip.begin("after.xml");
        zip.append("<after/>");
        zip.finish();
        output.commit();
    }
    const auto run = run_captured({"python3", "-c",
                                   "import sys, zipfile\n"
                                   "z = zipfile.ZipFile(sys.argv[1])\n"
                                   "print(z.getinfo('big.bin').file_size, z.read('after.xml').decode())\n",
                                   file.string()},
                                  std::nullopt, 60'000);
    EXPECT_TRUE(run.status.success()) << run.err;
    EXPECT_EQ(run.out, std::to_string(kChunks << 20) + " <after/>\n");
}

TEST(ZipWriter, AnArchiveNotFinishedIsNotWritten) {
    inferbench::testing::ScratchDir dir;
    const auto file = dir.path() / "a.zip";
    {
        OutputFile output(file);
        ZipWriter zip(output);
        zip.begin("a.xml");
        zip.append(rows(ZipWriter::kBufferBytes * 2));
    }  // an exception on the way: no finish(), no commit()
    EXPECT_FALSE(std::filesystem::exists(file));
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "no staging folder left";
}

}  // namespace
}  // namespace inferbench::report
