// The plan's input files: each layout read into samples of the model's inputs, and each misfit refused with one
// line naming the file and the input.
#include "backends/input_files.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "backends/npz_file.hpp"
#include "common/npz_writer.hpp"
#include "common/scratch_dir.hpp"
#include "common/user_error.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

using testing::user_error;

using testing::counting_tensor;
using testing::write_npz;

const std::vector<TensorInfo> kTwoInputs = {{"images", DType::f32, {2, 3}}, {"scale", DType::f32, {2}}};

TEST(InputFiles, AnNpzFeedsEachInputByName) {
    testing::ScratchDir dir;
    // In the archive's order, not the model's; an array no input takes is left alone.
    write_npz(dir.path() / "x.npz", {counting_tensor("scale", {2}, 100), counting_tensor("extra", {1}),
                                     counting_tensor("images", {2, 3})});
    const InputSamples samples = read_input_samples(dir.path() / "x.npz", kTwoInputs);
    ASSERT_EQ(samples.size(), 1u);
    ASSERT_EQ(samples[0].size(), 2u);
    EXPECT_EQ(samples[0][0].info.name, "images");
    EXPECT_EQ(samples[0][0].data, counting_tensor("images", {2, 3}).data);
    EXPECT_EQ(samples[0][1].info.name, "scale");
    EXPECT_EQ(samples[0][1].data, counting_tensor("scale", {2}, 100).data);
}

TEST(InputFiles, AnNpzArchiveListsItsArrays) {
    testing::ScratchDir dir;
    write_npz(dir.path() / "x.npz", {counting_tensor("a", {4}), counting_tensor("b", {1, 2})});
    const auto arrays = read_npz_file(dir.path() / "x.npz");
    ASSERT_EQ(arrays.size(), 2u);
    EXPECT_EQ(arrays[1].info.name, "b");
    EXPECT_EQ(arrays[1].info.shape, (std::vector<std::int64_t>{1, 2}));
}

TEST(InputFiles, FoldersOfSamplesAreReadInOrder) {
    testing::ScratchDir dir;
    const auto root = dir.path();
    // NAME_k.npy, as int8 calibration_data is laid out.
    std::filesystem::create_directories(root / "indexed");
    for (int k = 0; k < 3; ++k) {
        write_npy_file(root / "indexed" / fmt::format("images_{}.npy", k), counting_tensor("images", {2, 3}, 10.0F * static_cast<float>(k)));
        write_npy_file(root / "indexed" / fmt::format("scale_{}.npy", k), counting_tensor("scale", {2}, 10.0F * static_cast<float>(k)));
    }
    const auto indexed = read_input_samples(root / "indexed", kTwoInputs);
    ASSERT_EQ(indexed.size(), 3u);
    EXPECT_EQ(indexed[2][0].data, counting_tensor("images", {2, 3}, 20).data);
    // Numbered subfolders and archives, in number order (10 after 2).
    for (const int k : {0, 2, 10}) {
        const auto sub = root / "numbered" / std::to_string(k);
        std::filesystem::create_directories(sub);
        write_npy_file(sub / "images.npy", counting_tensor("images", {2, 3}, static_cast<float>(k)));
        write_npy_file(sub / "scale.npy", counting_tensor("scale", {2}));
    }
    const auto numbered = read_input_samples(root / "numbered", kTwoInputs);
    ASSERT_EQ(numbered.size(), 3u);
    EXPECT_EQ(numbered[1][0].data, counting_tensor("images", {2, 3}, 2).data);
    EXPECT_EQ(numbered[2][0].data, counting_tensor("images", {2, 3}, 10).data);
    std::filesystem::create_directories(root / "archives");
    write_npz(root / "archives" / "1.npz", {counting_tensor("images", {2, 3}, 1), counting_tensor("scale", {2})});
    write_npz(root / "archives" / "0.npz", {counting_tensor("images", {2, 3}, 0), counting_tensor("scale", {2})});
    const auto archives = read_input_samples(root / "archives", kTwoInputs);
    ASSERT_EQ(archives.size(), 2u);
    EXPECT_EQ(archives[1][0].data, counting_tensor("images", {2, 3}, 1).data);
    // One .npy per sample for a model of one input.
    const std::vector<TensorInfo> one = {kTwoInputs[0]};
    write_npy_file(root / "one.npy", counting_tensor("whatever", {2, 3}, 5));
    const auto single = read_input_samples(root / "one.npy", one);
    ASSERT_EQ(single.size(), 1u);
    EXPECT_EQ(single[0][0].info.name, "images");
}

TEST(InputFiles, AMisfitNamesTheFileAndTheInput) {
    testing::ScratchDir dir;
    const auto root = dir.path();
    write_npz(root / "batch4.npz", {counting_tensor("images", {4, 3}), counting_tensor("scale", {4})});
    EXPECT_EQ(user_error([&] { read_input_samples(root / "batch4.npz", kTwoInputs); }),
              "inputs " + (root / "batch4.npz").string() +
                  ":images.npy: shape [4, 3] does not fit input images, which takes [2, 3] at this cell's batch size "
                  "(the first dimension)");
    HostTensor doubles{{"scale", DType::f64, {2}}, std::vector<std::byte>(16)};
    write_npz(root / "types.npz", {counting_tensor("images", {2, 3}), doubles});
    EXPECT_EQ(user_error([&] { read_input_samples(root / "types.npz", kTwoInputs); }),
              "inputs " + (root / "types.npz").string() +
                  ":scale.npy: holds float64 but input scale takes float32; save it as that type");
    write_npz(root / "typo.npz", {counting_tensor("image", {2, 3}), counting_tensor("scale", {2})});
    EXPECT_EQ(user_error([&] { read_input_samples(root / "typo.npz", kTwoInputs); }),
              "inputs " + (root / "typo.npz").string() +
                  ": no array named images (it holds image, scale; the model's inputs are images, scale)");
    write_npz(root / "bzip2.npz", {counting_tensor("images", {2, 3})}, 12);
    EXPECT_NE(user_error([&] { read_input_samples(root / "bzip2.npz", kTwoInputs); })
                  .find("compressed with zip method 12, which numpy does not write"),
              std::string::npos);
    write_npy_file(root / "one.npy", counting_tensor("images", {2, 3}));
    EXPECT_NE(user_error([&] { read_input_samples(root / "one.npy", kTwoInputs); })
                  .find("one .npy array feeds a model of one input, and this one has 2 (images, scale)"),
              std::string::npos);
    // NAME_k.npy: as many for every input, else refused naming both (not cut to the shorter one unsaid).
    std::filesystem::create_directories(root / "uneven");
    for (int k = 0; k < 3; ++k) write_npy_file(root / "uneven" / fmt::format("images_{}.npy", k), counting_tensor("images", {2, 3}));
    for (int k = 0; k < 2; ++k) write_npy_file(root / "uneven" / fmt::format("scale_{}.npy", k), counting_tensor("scale", {2}));
    EXPECT_EQ(user_error([&] { read_input_samples(root / "uneven", kTwoInputs); }),
              "inputs " + (root / "uneven").string() +
                  ": input images has 3 files (images_0.npy, ...), input scale has 2; give each input the same number");
    std::filesystem::create_directories(root / "empty");
    EXPECT_NE(user_error([&] { read_input_samples(root / "empty", kTwoInputs); }).find("holds no NAME.npy per input"),
              std::string::npos);
    EXPECT_EQ(user_error([&] { read_input_samples(root / "missing.npz", kTwoInputs); }),
              "inputs " + (root / "missing.npz").string() + ": no such file or folder");
    dir.write("text.npz", "not a zip archive at all, just some words");
    EXPECT_NE(user_error([&] { read_input_samples(root / "text.npz", kTwoInputs); }).find("not an .npz archive"),
              std::string::npos);
    // Cut anywhere, an archive is refused with a line, never read past its end.
    const std::string whole = [&] {
        std::ifstream in(root / "batch4.npz", std::ios::binary);
        return std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }();
    for (std::size_t cut = 0; cut < whole.size(); cut += 7) {
        dir.write("cut.npz", whole.substr(0, cut));
        EXPECT_THROW(read_npz_file(root / "cut.npz"), UserError) << cut;
    }
}

}  // namespace
}  // namespace inferbench
