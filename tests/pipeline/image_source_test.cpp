// Image folders (name order, non-images skipped with one line each, empty folders refused) and the synthetic
// images (written once with the real encoder, cached by every setting, complete or absent, photo-like in size).
#include "pipeline/image_source.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/file_io.hpp"

namespace inferbench::pipeline {
namespace {

namespace fs = std::filesystem;

void write_bytes(const fs::path& file, const std::vector<std::uint8_t>& bytes) {
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

PipelineSettings synthetic_settings(std::int64_t count, ImageSize size, ImageFormat format = ImageFormat::jpeg) {
    PipelineSettings settings;
    settings.images = std::string(kSyntheticImages);
    settings.image_count = count;
    settings.image_size = size;
    settings.image_format = format;
    return settings;
}

TEST(ImageFolder, ReadsImagesInNameOrderByContentAndSkipsTheRestWithOneLineEach) {
    testing::ScratchDir dir;
    write_bytes(dir.path() / "b.png", encode_png(synthetic_image({8, 6}, 1, 0)));
    write_bytes(dir.path() / "a.jpg", encode_jpeg(synthetic_image({8, 6}, 1, 1), 90));
    write_bytes(dir.path() / "c.data", encode_jpeg(synthetic_image({8, 6}, 1, 2), 90));
    dir.write("notes.jpg", "not a picture despite its name");
    fs::create_directory(dir.path() / "sub");
    const ImageSet set = read_image_folder(dir.path(), 0);
    ASSERT_EQ(set.images.size(), 3U);
    EXPECT_EQ(set.images[0].name, "a.jpg");
    EXPECT_EQ(set.images[1].name, "b.png");
    EXPECT_EQ(set.images[2].name, "c.data");
    ASSERT_EQ(set.skipped.size(), 1U);
    EXPECT_NE(set.skipped[0].find("notes.jpg: not a JPEG or PNG file"), std::string::npos) << set.skipped[0];
    EXPECT_EQ(read_image_folder(dir.path(), 2).images.size(), 2U);
}

TEST(ImageFolder, EmptyMissingOrAllRefusedFoldersAreOneClearError) {
    testing::ScratchDir dir;
    fs::create_directory(dir.path() / "empty");
    try {
        read_image_folder(dir.path() / "empty", 0);
        FAIL() << "an empty folder was accepted";
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find("holds no JPEG or PNG image (0 files skipped)"), std::string::npos)
            << error.what();
    }
    EXPECT_THROW(read_image_folder(dir.path() / "missing", 0), UserError);
    dir.write("empty/readme.txt", "text");
    write_bytes(dir.path() / "empty" / "big.png", encode_png(synthetic_image({8, 6}, 1, 0)));
    try {
        read_image_folder(dir.path() / "empty", 0, {.max_side = 7, .max_pixels = kMaxImagePixels});
        FAIL() << "a folder of refused files was accepted";
    } catch (const UserError& error) {
        EXPECT_NE(std::string(error.what()).find("(2 files skipped)"), std::string::npos) << error.what();
    }
}

TEST(SyntheticImages, DeterministicAndDifferentPerIndex) {
    const RgbImage a = synthetic_image({64, 48}, 1, 0);
    EXPECT_EQ(a.pixels, synthetic_image({64, 48}, 1, 0).pixels);
    EXPECT_NE(a.pixels, synthetic_image({64, 48}, 1, 1).pixels);
    EXPECT_NE(a.pixels, synthetic_image({64, 48}, 2, 0).pixels);
}

// A photo of 640x480 at quality 90 is commonly 60-200 kB (1.5-5 bits a pixel): the synthetic content is meant
// to cost the decoder about that much entropy, neither a flat image nor white noise.
TEST(SyntheticImages, JpegSizeIsPhotoLike) {
    const auto bytes = encode_jpeg(synthetic_image({640, 480}, 1, 0), 90);
    const double bits_per_pixel = static_cast<double>(bytes.size()) * 8.0 / (640.0 * 480.0);
    EXPECT_GT(bits_per_pixel, 1.0);
    EXPECT_LT(bits_per_pixel, 6.0);
}

TEST(SyntheticImages, WrittenOnceIntoACacheNamedByEverySetting) {
    testing::ScratchDir cache;
    const auto settings = synthetic_settings(3, {40, 30});
    const ImageSet first = synthetic_images(settings, cache.path());
    ASSERT_EQ(first.images.size(), 3U);
    EXPECT_EQ(first.images[0].name, "synthetic-0000.jpg");
    EXPECT_EQ(decode_image(first.images[2].bytes, "x").size(), (ImageSize{40, 30}));
    const fs::path dir = synthetic_images_dir(settings, cache.path());
    EXPECT_TRUE(fs::is_directory(dir));
    const auto written = fs::last_write_time(dir / "synthetic-0001.jpg");
    const ImageSet second = synthetic_images(settings, cache.path());
    EXPECT_EQ(fs::last_write_time(dir / "synthetic-0001.jpg"), written);
    EXPECT_EQ(second.images[1].bytes, first.images[1].bytes);
    // No staging folder is left beside it.
    for (const auto& entry : fs::directory_iterator(dir.parent_path()))
        EXPECT_FALSE(entry.path().filename().string().starts_with(kStagingPrefix)) << entry.path();
    // Every setting names its own folder.
    auto other = settings;
    for (auto* changed : {&other}) {
        changed->jpeg_quality = 80;
        EXPECT_NE(synthetic_images_dir(*changed, cache.path()), dir);
        *changed = settings;
        changed->image_count = 4;
        EXPECT_NE(synthetic_images_dir(*changed, cache.path()), dir);
        *changed = settings;
        changed->image_size = {30, 40};
        EXPECT_NE(synthetic_images_dir(*changed, cache.path()), dir);
        *changed = settings;
        changed->image_format = ImageFormat::png;
        EXPECT_NE(synthetic_images_dir(*changed, cache.path()), dir);
    }
    const ImageSet png = load_images(synthetic_settings(2, {16, 16}, ImageFormat::png), cache.path());
    EXPECT_EQ(sniff_image_format(png.images[0].bytes), ImageFormat::png);
}

TEST(SyntheticImages, RefusesSettingsOutOfRange) {
    testing::ScratchDir cache;
    EXPECT_THROW(synthetic_images(synthetic_settings(0, {8, 8}), cache.path()), UserError);
    EXPECT_THROW(synthetic_images(synthetic_settings(1, {0, 8}), cache.path()), UserError);
    EXPECT_THROW(synthetic_images(synthetic_settings(1, {16385, 8}), cache.path()), UserError);
    auto bad_quality = synthetic_settings(1, {8, 8});
    bad_quality.jpeg_quality = 0;
    EXPECT_THROW(synthetic_images(bad_quality, cache.path()), UserError);
    EXPECT_FALSE(fs::exists(cache.path() / "pipeline-images"));
}

}  // namespace
}  // namespace inferbench::pipeline
