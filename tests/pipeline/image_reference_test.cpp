// Decode, resize and normalise against independent references: Pillow and torchvision, run through the system's
// python3 (python3-pil, python3-torchvision) on images this test writes. The tolerances are the module's claims:
// decode identical to Pillow (both use libjpeg-turbo's accurate DCT and fancy upsampling; libpng is lossless),
// resize identical to Pillow's BILINEAR and to torchvision's PIL path, within 1 per value of torchvision's tensor
// path (which works in float), normalise identical to torchvision's normalize in float32.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/scratch_dir.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/resize.hpp"

namespace inferbench::pipeline {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPython = "/usr/bin/python3";

std::vector<std::uint8_t> read_bytes(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, std::span<const std::uint8_t> bytes) {
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
}

bool references_available() {
    return std::system("/usr/bin/python3 -c 'import PIL, torch, torchvision, numpy' >/dev/null 2>&1") == 0;
}

// The largest difference per value, and how many values differ.
struct Difference {
    int max = 0;
    std::size_t count = 0;
};

Difference compare(std::span<const std::uint8_t> ours, std::span<const std::uint8_t> theirs) {
    Difference d;
    EXPECT_EQ(ours.size(), theirs.size());
    for (std::size_t i = 0; i < std::min(ours.size(), theirs.size()); ++i) {
        const int diff = std::abs(int{ours[i]} - int{theirs[i]});
        d.max = std::max(d.max, diff);
        d.count += diff != 0 ? 1 : 0;
    }
    return d;
}

// Writes the jobs, runs the reference once over all of them.
class ImageReference : public ::testing::Test {
protected:
    void SetUp() override {
        if (!references_available())
            GTEST_SKIP() << "python3 with Pillow, torch and torchvision not found: apt-get install python3-pil "
                            "python3-torchvision (scripts/setup.sh --tests)";
    }
    fs::path raw(const std::string& name, const RgbImage& image) {
        write_bytes(dir.path() / name, image.pixels);
        return dir.path() / name;
    }
    void job(const std::string& line) { jobs << line << '\n'; }
    void run() {
        dir.write("jobs.txt", jobs.str());
        const std::string command = std::string(kPython) + " " + INFERBENCH_IMAGE_REFERENCE_PY + " " +
                                    dir.file("jobs.txt") + " 2>" + dir.file("stderr.txt");
        ASSERT_EQ(std::system(command.c_str()), 0) << read_text("stderr.txt");
    }
    std::string read_text(const std::string& name) {
        std::ifstream in(dir.path() / name);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    std::vector<std::uint8_t> result(const std::string& name) { return read_bytes(dir.path() / name); }

    testing::ScratchDir dir;
    std::ostringstream jobs;
};

TEST_F(ImageReference, DecodeMatchesPillowForJpegPngGrayscaleAndCmyk) {
    const RgbImage source = synthetic_image({173, 97}, 7, 0);
    write_bytes(dir.path() / "colour.jpg", encode_jpeg(source, 90));
    write_bytes(dir.path() / "colour.png", encode_png(source));
    const fs::path source_raw = raw("source.rgb", source);
    job("save " + source_raw.string() + " 173 97 L " + dir.file("gray.jpg") + " 85");
    job("save " + source_raw.string() + " 173 97 CMYK " + dir.file("cmyk.jpg") + " 85");
    for (const char* name : {"colour.jpg", "colour.png", "gray.jpg", "cmyk.jpg"})
        job(std::string("decode ") + dir.file(name) + " " + dir.file(std::string(name) + ".pil"));
    run();
    for (const char* name : {"colour.jpg", "colour.png", "gray.jpg", "cmyk.jpg"}) {
        SCOPED_TRACE(name);
        const RgbImage ours = decode_image(read_bytes(dir.path() / name), name);
        EXPECT_EQ(ours.size(), (ImageSize{173, 97}));
        const Difference d = compare(ours.pixels, result(std::string(name) + ".pil"));
        EXPECT_EQ(d.max, 0) << d.count << " values differ";
    }
}

struct ResizeCase {
    ImageSize from;
    ImageSize to;
};

TEST_F(ImageReference, ResizeMatchesPillowExactlyAndTorchvisionTensorsWithinOne) {
    const std::vector<ResizeCase> cases{{{640, 480}, {224, 224}}, {{500, 375}, {341, 256}}, {{50, 40}, {224, 224}},
                                        {{173, 97}, {61, 200}},   {{1000, 3}, {7, 9}},      {{300, 300}, {300, 150}}};
    std::vector<RgbImage> ours;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases[i];
        const RgbImage source = synthetic_image(c.from, 11, static_cast<std::int64_t>(i));
        const fs::path in = raw("in" + std::to_string(i) + ".rgb", source);
        const std::string sizes = std::to_string(c.from.width) + " " + std::to_string(c.from.height) + " " +
                                  std::to_string(c.to.width) + " " + std::to_string(c.to.height) + " ";
        job("pil_resize " + in.string() + " " + sizes + dir.file("pil" + std::to_string(i)));
        job("tv_resize " + in.string() + " " + sizes + dir.file("tv" + std::to_string(i)));
        PipelineSteps steps;
        steps.resize = ResizeRule::plain;
        steps.input_size = c.to;
        ResizeScratch scratch;
        RgbImage out;
        resize_image(source, steps, out, scratch);
        ours.push_back(std::move(out));
    }
    run();
    for (std::size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(to_string(cases[i].from) + " -> " + to_string(cases[i].to));
        const Difference pil = compare(ours[i].pixels, result("pil" + std::to_string(i)));
        EXPECT_EQ(pil.max, 0) << pil.count << " values differ from Pillow";
        const Difference tv = compare(ours[i].pixels, result("tv" + std::to_string(i)));
        EXPECT_LE(tv.max, 1) << tv.count << " values differ from torchvision";
    }
}

TEST_F(ImageReference, ShorterSideCropMatchesTorchvisionResizeAndCenterCrop) {
    const std::vector<ImageSize> sizes{{500, 375}, {375, 500}, {641, 479}, {224, 224}, {1001, 257}};
    std::vector<RgbImage> ours;
    PipelineSteps steps;
    steps.resize = ResizeRule::shorter_side_crop;
    steps.input_size = {224, 224};
    steps.resize_shorter = 256;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        const RgbImage source = synthetic_image(sizes[i], 13, static_cast<std::int64_t>(i));
        const fs::path in = raw("c" + std::to_string(i) + ".rgb", source);
        job("tv_classify " + in.string() + " " + std::to_string(sizes[i].width) + " " +
            std::to_string(sizes[i].height) + " 256 224 " + dir.file("tvc" + std::to_string(i)));
        ResizeScratch scratch;
        RgbImage out;
        resize_image(source, steps, out, scratch);
        ours.push_back(std::move(out));
    }
    run();
    for (std::size_t i = 0; i < sizes.size(); ++i) {
        SCOPED_TRACE(to_string(sizes[i]));
        const Difference d = compare(ours[i].pixels, result("tvc" + std::to_string(i)));
        EXPECT_EQ(d.max, 0) << d.count << " values differ";
    }
}

TEST_F(ImageReference, NormalizeMatchesTorchvisionInFloat32) {
    PipelineSteps steps;
    steps.input_size = {31, 17};
    steps.mean = {123.675F, 116.28F, 103.53F};
    steps.std = {58.395F, 57.12F, 57.375F};
    const RgbImage image = synthetic_image(steps.input_size, 17, 0);
    const fs::path in = raw("n.rgb", image);
    job("tv_normalize " + in.string() + " 31 17 123.675 116.28 103.53 58.395 57.12 57.375 " + dir.file("tvn"));
    run();
    std::vector<float> ours(3 * 31 * 17);
    normalize_into(image, steps, std::as_writable_bytes(std::span(ours)), 0);
    const auto theirs_bytes = result("tvn");
    ASSERT_EQ(theirs_bytes.size(), ours.size() * sizeof(float));
    std::vector<float> theirs(ours.size());
    std::memcpy(theirs.data(), theirs_bytes.data(), theirs_bytes.size());
    for (std::size_t i = 0; i < ours.size(); ++i) ASSERT_NEAR(ours[i], theirs[i], 1e-6F) << "element " << i;
}

}  // namespace
}  // namespace inferbench::pipeline
