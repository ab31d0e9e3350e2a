// Decode, resize and normalise against independent references: Pillow and torchvision, run through the system's
// python3 (python3-pil, python3-torchvision) on images this test writes. The tolerances are the module's claims:
// decode identical to Pillow (both use libjpeg-turbo's accurate DCT and fancy upsampling; libpng is lossless),
// resize identical to Pillow's BILINEAR and to torchvision's PIL path, within 1 per value of torchvision's tensor
// path (which works in float), letterbox identical to Pillow's resize pasted on the fill, normalise identical to
// torchvision's normalize in float32.
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
    std::ofstream(file, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
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

// Every test's inputs are written and its jobs queued first (the prepare_* functions), then python3 runs once
// over all of them (its start, with torch, takes seconds), then each test compares.
struct Reference {
    testing::ScratchDir dir;
    std::ostringstream jobs;
    std::string failure;  // python3's stderr when it failed

    fs::path raw(const std::string& name, const RgbImage& image) {
        write_bytes(dir.path() / name, image.pixels);
        return dir.path() / name;
    }
    void job(const std::string& line) { jobs << line << '\n'; }
    std::vector<std::uint8_t> result(const std::string& name) const { return read_bytes(dir.path() / name); }
};

// Whether this process runs ImageReference.<name> (the filter selects it).
bool will_run(const std::string& name) {
    const auto* unit = ::testing::UnitTest::GetInstance();
    for (int i = 0; i < unit->total_test_suite_count(); ++i) {
        const auto* suite = unit->GetTestSuite(i);
        if (std::string(suite->name()) != "ImageReference") continue;
        for (int j = 0; j < suite->total_test_count(); ++j)
            if (suite->GetTestInfo(j)->name() == name) return suite->GetTestInfo(j)->should_run();
    }
    return false;
}

void prepare_decode(Reference& r);
void prepare_resize(Reference& r);
void prepare_crop(Reference& r);
void prepare_letterbox(Reference& r);
void prepare_normalize(Reference& r);

class ImageReference : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (!references_available()) return;
        reference = new Reference;
        // Only the tests that run (ctest runs one a process) get their jobs: torch's import is the cost.
        const std::pair<const char*, void (*)(Reference&)> preparations[] = {
            {"DecodeMatchesPillowForJpegPngGrayscaleCmykAndProgressive", prepare_decode},
            {"ResizeMatchesPillowExactlyAndTorchvisionTensorsWithinOne", prepare_resize},
            {"ShorterSideCropMatchesTorchvisionResizeAndCenterCrop", prepare_crop},
            {"LetterboxIsPillowsResizePastedOnTheFill", prepare_letterbox},
            {"NormalizeMatchesTorchvisionInFloat32", prepare_normalize}};
        for (const auto& [name, prepare] : preparations)
            if (will_run(name)) prepare(*reference);
        reference->dir.write("jobs.txt", reference->jobs.str());
        const std::string command = std::string(kPython) + " " + INFERBENCH_IMAGE_REFERENCE_PY + " " +
                                    reference->dir.file("jobs.txt") + " 2>" + reference->dir.file("stderr.txt");
        if (std::system(command.c_str()) != 0) {
            std::ifstream in(reference->dir.path() / "stderr.txt");
            reference->failure = "the reference failed: " + std::string(std::istreambuf_iterator<char>(in), {});
        }
    }
    static void TearDownTestSuite() {
        delete reference;
        reference = nullptr;
    }
    void SetUp() override {
        if (reference == nullptr)
            GTEST_SKIP() << "python3 with Pillow, torch and torchvision not found: apt-get install python3-pil "
                            "python3-torchvision (scripts/setup.sh --tests)";
        ASSERT_TRUE(reference->failure.empty()) << reference->failure;
    }
    static Reference* reference;
};

Reference* ImageReference::reference = nullptr;

const char* const kDecoded[] = {"colour.jpg", "colour.png", "gray.jpg", "cmyk.jpg", "progressive.jpg"};

void prepare_decode(Reference& r) {
    const RgbImage source = synthetic_image({173, 97}, 7, 0);
    write_bytes(r.dir.path() / "colour.jpg", encode_jpeg(source, 90));
    write_bytes(r.dir.path() / "colour.png", encode_png(source));
    const fs::path source_raw = r.raw("source.rgb", source);
    r.job("save " + source_raw.string() + " 173 97 L " + r.dir.file("gray.jpg") + " 85");
    r.job("save " + source_raw.string() + " 173 97 CMYK " + r.dir.file("cmyk.jpg") + " 85");
    r.job("save_progressive " + source_raw.string() + " 173 97 " + r.dir.file("progressive.jpg") + " 80");
    for (const char* name : kDecoded)
        r.job(std::string("decode ") + r.dir.file(name) + " " + r.dir.file(std::string(name) + ".pil"));
}

TEST_F(ImageReference, DecodeMatchesPillowForJpegPngGrayscaleCmykAndProgressive) {
    for (const char* name : kDecoded) {
        SCOPED_TRACE(name);
        const RgbImage ours = decode_image(read_bytes(reference->dir.path() / name), name);
        EXPECT_EQ(ours.size(), (ImageSize{173, 97}));
        const Difference d = compare(ours.pixels, reference->result(std::string(name) + ".pil"));
        EXPECT_EQ(d.max, 0) << d.count << " values differ";
    }
}

struct ResizeCase {
    ImageSize from;
    ImageSize to;
};

const ResizeCase kResizes[] = {{{640, 480}, {224, 224}},  {{500, 375}, {341, 256}}, {{50, 40}, {224, 224}},
                               {{173, 97}, {61, 200}},    {{1000, 3}, {7, 9}},      {{300, 300}, {300, 150}},
                               {{1920, 1080}, {300, 300}}};

RgbImage resize_input(std::size_t i) { return synthetic_image(kResizes[i].from, 11, static_cast<std::int64_t>(i)); }

void prepare_resize(Reference& r) {
    for (std::size_t i = 0; i < std::size(kResizes); ++i) {
        const auto& c = kResizes[i];
        const fs::path in = r.raw("in" + std::to_string(i) + ".rgb", resize_input(i));
        const std::string sizes = std::to_string(c.from.width) + " " + std::to_string(c.from.height) + " " +
                                  std::to_string(c.to.width) + " " + std::to_string(c.to.height) + " ";
        r.job("pil_resize " + in.string() + " " + sizes + r.dir.file("pil" + std::to_string(i)));
        r.job("tv_resize " + in.string() + " " + sizes + r.dir.file("tv" + std::to_string(i)));
    }
}

TEST_F(ImageReference, ResizeMatchesPillowExactlyAndTorchvisionTensorsWithinOne) {
    for (std::size_t i = 0; i < std::size(kResizes); ++i) {
        SCOPED_TRACE(to_string(kResizes[i].from) + " -> " + to_string(kResizes[i].to));
        PipelineSteps steps;
        steps.resize = ResizeRule::plain;
        steps.input_size = kResizes[i].to;
        ResizeScratch scratch;
        RgbImage ours;
        resize_image(resize_input(i), steps, ours, scratch);
        const Difference pil = compare(ours.pixels, reference->result("pil" + std::to_string(i)));
        EXPECT_EQ(pil.max, 0) << pil.count << " values differ from Pillow";
        const Difference tv = compare(ours.pixels, reference->result("tv" + std::to_string(i)));
        EXPECT_LE(tv.max, 1) << tv.count << " values differ from torchvision";
        RecordProperty("torchvision_differing_values_" + std::to_string(i), static_cast<int>(tv.count));
    }
}

const ImageSize kCropSources[] = {{500, 375}, {375, 500}, {641, 479}, {224, 224}, {1001, 257}};

RgbImage crop_input(std::size_t i) { return synthetic_image(kCropSources[i], 13, static_cast<std::int64_t>(i)); }

void prepare_crop(Reference& r) {
    for (std::size_t i = 0; i < std::size(kCropSources); ++i) {
        const fs::path in = r.raw("c" + std::to_string(i) + ".rgb", crop_input(i));
        r.job("tv_classify " + in.string() + " " + std::to_string(kCropSources[i].width) + " " +
              std::to_string(kCropSources[i].height) + " 256 224 " + r.dir.file("tvc" + std::to_string(i)));
    }
}

TEST_F(ImageReference, ShorterSideCropMatchesTorchvisionResizeAndCenterCrop) {
    PipelineSteps steps;
    steps.resize = ResizeRule::shorter_side_crop;
    steps.input_size = {224, 224};
    steps.resize_shorter = 256;
    for (std::size_t i = 0; i < std::size(kCropSources); ++i) {
        SCOPED_TRACE(to_string(kCropSources[i]));
        ResizeScratch scratch;
        RgbImage ours;
        resize_image(crop_input(i), steps, ours, scratch);
        const Difference d = compare(ours.pixels, reference->result("tvc" + std::to_string(i)));
        EXPECT_EQ(d.max, 0) << d.count << " values differ";
    }
}

// ultralytics' letterbox, rebuilt from Pillow: the image resized to the geometry's scaled size and pasted at its
// padding on a canvas of the fill. (ultralytics itself resizes with OpenCV's INTER_LINEAR, without antialiasing;
// inferbench uses the one filter everywhere, as the GPU kernels do.)
const ImageSize kLetterboxSources[] = {{640, 480}, {411, 416}, {300, 1000}};

void prepare_letterbox(Reference& r) {
    PipelineSteps steps;
    steps.resize = ResizeRule::letterbox;
    steps.input_size = {416, 416};
    for (std::size_t i = 0; i < std::size(kLetterboxSources); ++i) {
        const ImageSize from = kLetterboxSources[i];
        const ResizeGeometry g = resize_geometry(from, steps);
        const fs::path in = r.raw("l" + std::to_string(i) + ".rgb", synthetic_image(from, 19, 0));
        r.job("pil_resize " + in.string() + " " + std::to_string(from.width) + " " + std::to_string(from.height) + " " +
              std::to_string(g.scaled.width) + " " + std::to_string(g.scaled.height) + " " +
              r.dir.file("pl" + std::to_string(i)));
    }
}

TEST_F(ImageReference, LetterboxIsPillowsResizePastedOnTheFill) {
    PipelineSteps steps;
    steps.resize = ResizeRule::letterbox;
    steps.input_size = {416, 416};
    steps.letterbox_fill = 114.0F;
    for (std::size_t i = 0; i < std::size(kLetterboxSources); ++i) {
        SCOPED_TRACE(to_string(kLetterboxSources[i]));
        const ResizeGeometry g = resize_geometry(kLetterboxSources[i], steps);
        const auto scaled = reference->result("pl" + std::to_string(i));
        std::vector<std::uint8_t> expected(416 * 416 * 3, 114);
        for (std::int64_t y = 0; y < g.scaled.height; ++y)
            std::copy_n(scaled.begin() + y * g.scaled.width * 3, g.scaled.width * 3,
                        expected.begin() + ((y + g.pad_y) * 416 + g.pad_x) * 3);
        ResizeScratch scratch;
        RgbImage ours;
        resize_image(synthetic_image(kLetterboxSources[i], 19, 0), steps, ours, scratch);
        const Difference d = compare(ours.pixels, expected);
        EXPECT_EQ(d.max, 0) << d.count << " values differ";
    }
}

PipelineSteps imagenet_steps() {
    PipelineSteps steps;
    steps.input_size = {31, 17};
    steps.mean = {123.675F, 116.28F, 103.53F};
    steps.std = {58.395F, 57.12F, 57.375F};
    return steps;
}

void prepare_normalize(Reference& r) {
    const fs::path in = r.raw("n.rgb", synthetic_image(imagenet_steps().input_size, 17, 0));
    r.job("tv_normalize " + in.string() + " 31 17 123.675 116.28 103.53 58.395 57.12 57.375 " + r.dir.file("tvn"));
}

TEST_F(ImageReference, NormalizeMatchesTorchvisionInFloat32) {
    const PipelineSteps steps = imagenet_steps();
    std::vector<float> ours(3 * 31 * 17);
    normalize_into(synthetic_image(steps.input_size, 17, 0), steps, std::as_writable_bytes(std::span(ours)), 0);
    const auto theirs_bytes = reference->result("tvn");
    ASSERT_EQ(theirs_bytes.size(), ours.size() * sizeof(float));
    std::vector<float> theirs(ours.size());
    std::memcpy(theirs.data(), theirs_bytes.data(), theirs_bytes.size());
    for (std::size_t i = 0; i < ours.size(); ++i) ASSERT_NEAR(ours[i], theirs[i], 1e-6F) << "element " << i;
}

}  // namespace
}  // namespace inferbench::pipeline
