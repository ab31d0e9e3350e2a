// Archives numpy.savez_compressed wrote (fixtures from tests/backends/fixtures/make_npz_fixtures.py): read as
// numpy.savez's, and a damaged deflated member refused with one line naming the file, the member and the fault.
#include "backends/npz_file.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "backends/input_files.hpp"
#include "common/npz_writer.hpp"
#include "common/scratch_dir.hpp"
#include "common/user_error.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using testing::counting_tensor;
using testing::user_error;

const std::filesystem::path kFixtures = INFERBENCH_NPZ_FIXTURES_DIR;
const std::vector<TensorInfo> kTwoInputs = {{"images", DType::f32, {2, 3}}, {"scale", DType::f32, {2}}};

std::string file_bytes(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// compressed.npz with its first central-directory entry (images.npy) changed at `field` to `value`.
std::filesystem::path patched(const testing::ScratchDir& dir, std::size_t field, std::uint32_t value) {
    std::string bytes = file_bytes(kFixtures / "compressed.npz");
    const std::size_t entry = bytes.find(std::string("PK\x01\x02", 4));
    std::string patch;
    testing::put_le(patch, value, 4);
    bytes.replace(entry + field, 4, patch);
    const auto file = dir.path() / "patched.npz";
    std::ofstream(file, std::ios::binary) << bytes;
    return file;
}

TEST(NpzFile, ReadsWhatNumpySavezCompressedWrote) {
    const InputSamples samples = read_input_samples(kFixtures / "compressed.npz", kTwoInputs);
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0][0].data, counting_tensor("images", {2, 3}).data);
    EXPECT_EQ(samples[0][1].data, counting_tensor("scale", {2}, 100).data);
    // 256 KiB in several deflate blocks.
    const auto large = read_npz_file(kFixtures / "compressed_large.npz");
    ASSERT_EQ(large.size(), 1u);
    EXPECT_EQ(large[0].info.shape, (std::vector<std::int64_t>{64, 1024}));
    EXPECT_EQ(large[0].data, counting_tensor("images", {64, 1024}).data);
}

TEST(NpzFile, AWrongCrcIsRefusedWithOneLine) {
    testing::ScratchDir dir;
    const auto file = patched(dir, 16, 0x12345678);
    EXPECT_EQ(user_error([&] { read_npz_file(file); }),
              file.string() + ":images.npy: a damaged member (CRC-32 2a00e94f, not the 12345678 its header declares); "
                              "save the arrays again with numpy.savez or numpy.savez_compressed");
}

TEST(NpzFile, ATruncatedDeflateStreamIsRefusedWithOneLine) {
    testing::ScratchDir dir;
    // The directory says the member's deflated bytes are 40 of its 85: the stream stops before its last block.
    const auto file = patched(dir, 20, 40);
    EXPECT_EQ(user_error([&] { read_npz_file(file); }),
              file.string() + ":images.npy: a damaged member (its deflate stream ends early: the archive was cut short "
                              "or damaged); save the arrays again with numpy.savez or numpy.savez_compressed");
}

TEST(NpzFile, AWrongSizeIsRefusedBeforeItIsAllocated) {
    testing::ScratchDir dir;
    EXPECT_NE(user_error([&] { read_npz_file(patched(dir, 24, 100)); })
                  .find(":images.npy: a damaged member (inflates to more than the 100 bytes its header declares)"),
              std::string::npos);
    EXPECT_NE(user_error([&] { read_npz_file(patched(dir, 24, 200)); })
                  .find(":images.npy: a damaged member (inflates to 152 bytes, not the 200 its header declares)"),
              std::string::npos);
    // 4 GB declared for 85 deflated bytes: refused from the header alone.
    EXPECT_NE(user_error([&] { read_npz_file(patched(dir, 24, 0xFFFFFF00)); })
                  .find("declares 4294967040 bytes, more than its 85 deflated bytes can hold"),
              std::string::npos);
}

TEST(NpzFile, ACompressedArchiveCutAnywhereIsRefused) {
    testing::ScratchDir dir;
    const std::string whole = file_bytes(kFixtures / "compressed.npz");
    for (std::size_t cut = 0; cut < whole.size(); ++cut) {
        std::ofstream(dir.path() / "cut.npz", std::ios::binary) << whole.substr(0, cut);
        EXPECT_THROW(read_npz_file(dir.path() / "cut.npz"), UserError) << cut;
    }
}

}  // namespace
}  // namespace inferbench
