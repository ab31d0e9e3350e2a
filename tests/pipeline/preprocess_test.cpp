// Normalise's layouts, channel orders and element types on values computed by hand; a batch's decode, resize and
// normalise over the pool with its stage times and a failed image counted; the pool itself.
#include "pipeline/preprocess.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "models/onnx_fp16.hpp"

namespace inferbench::pipeline {
namespace {

// A 2x1 image: pixel 0 (10, 20, 30), pixel 1 (40, 50, 60).
RgbImage two_pixels() {
    RgbImage image;
    image.reshape({2, 1});
    image.pixels = {10, 20, 30, 40, 50, 60};
    return image;
}

PipelineSteps two_pixel_steps() {
    PipelineSteps steps;
    steps.input_size = {2, 1};
    steps.mean = {10.0F, 20.0F, 30.0F};
    steps.std = {2.0F, 4.0F, 5.0F};
    return steps;
}

std::vector<float> normalized_f32(const PipelineSteps& steps, std::int64_t slots = 1, std::int64_t slot = 0) {
    std::vector<float> out(static_cast<std::size_t>(slots) * image_slot_bytes(steps) / sizeof(float), -99.0F);
    normalize_into(two_pixels(), steps, std::as_writable_bytes(std::span(out)), slot);
    return out;
}

TEST(Normalize, NchwRgbPlanes) {
    EXPECT_EQ(normalized_f32(two_pixel_steps()), (std::vector<float>{0, 15, 0, 7.5F, 0, 6}));
}

TEST(Normalize, NhwcAndBgrOrder) {
    auto steps = two_pixel_steps();
    steps.layout = TensorLayout::nhwc;
    EXPECT_EQ(normalized_f32(steps), (std::vector<float>{0, 0, 0, 15, 7.5F, 6}));
    steps.bgr = true;
    EXPECT_EQ(normalized_f32(steps), (std::vector<float>{0, 0, 0, 6, 7.5F, 15}));
    steps.layout = TensorLayout::nchw;
    EXPECT_EQ(normalized_f32(steps), (std::vector<float>{0, 6, 0, 7.5F, 0, 15}));
}

TEST(Normalize, WritesOnlyItsSlot) {
    const auto out = normalized_f32(two_pixel_steps(), 3, 1);
    EXPECT_EQ(std::vector<float>(out.begin(), out.begin() + 6), std::vector<float>(6, -99.0F));
    EXPECT_EQ(std::vector<float>(out.begin() + 6, out.begin() + 12), (std::vector<float>{0, 15, 0, 7.5F, 0, 6}));
    EXPECT_EQ(std::vector<float>(out.begin() + 12, out.end()), std::vector<float>(6, -99.0F));
}

TEST(Normalize, HalfAndByteElements) {
    auto steps = two_pixel_steps();
    steps.pixel_type = PixelType::f16;
    std::vector<std::uint16_t> half(6);
    normalize_into(two_pixels(), steps, std::as_writable_bytes(std::span(half)), 0);
    EXPECT_EQ(models::onnx::from_fp16(half[1]), 15.0F);
    EXPECT_EQ(models::onnx::from_fp16(half[3]), 7.5F);
    steps.pixel_type = PixelType::u8;
    steps.mean = {0, 0, 0};
    steps.std = {1, 1, 1};
    std::vector<std::uint8_t> bytes(6);
    normalize_into(two_pixels(), steps, std::as_writable_bytes(std::span(bytes)), 0);
    EXPECT_EQ(bytes, (std::vector<std::uint8_t>{10, 40, 20, 50, 30, 60}));
}

TEST(Normalize, RefusesAWrongSizeOrASlotOutsideTheBatch) {
    auto steps = two_pixel_steps();
    std::vector<float> out(6);
    steps.input_size = {3, 1};
    EXPECT_THROW(normalize_into(two_pixels(), steps, std::as_writable_bytes(std::span(out)), 0), std::invalid_argument);
    steps.input_size = {2, 1};
    EXPECT_THROW(normalize_into(two_pixels(), steps, std::as_writable_bytes(std::span(out)), 1), std::invalid_argument);
    EXPECT_THROW(normalize_into(two_pixels(), steps, std::as_writable_bytes(std::span(out)), -1),
                 std::invalid_argument);
}

TEST(ThreadPool, RunsEveryIndexOnceOnItsWorkersBatchAfterBatch) {
    ThreadPool pool(3);
    EXPECT_EQ(pool.size(), 3U);
    for (int round = 0; round < 50; ++round) {
        std::vector<std::atomic<int>> seen(37);
        std::atomic<bool> bad_worker{false};
        pool.parallel_for(seen.size(), [&](std::size_t index, std::size_t worker) {
            seen[index]++;
            if (worker >= 3) bad_worker = true;
        });
        for (const auto& count : seen) ASSERT_EQ(count.load(), 1);
        ASSERT_FALSE(bad_worker);
    }
    pool.parallel_for(0, [](std::size_t, std::size_t) { FAIL() << "no index to run"; });
}

TEST(ThreadPool, RethrowsTheFirstErrorAfterAllIndicesRan) {
    ThreadPool pool(2);
    std::atomic<int> ran{0};
    EXPECT_THROW(pool.parallel_for(10,
                                   [&](std::size_t index, std::size_t) {
                                       ran++;
                                       if (index == 3) throw std::runtime_error("three");
                                   }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 10);
    pool.parallel_for(4, [&](std::size_t, std::size_t) { ran++; });  // still usable
    EXPECT_EQ(ran.load(), 14);
    EXPECT_THROW(ThreadPool(0), std::invalid_argument);
}

TEST(PreprocessBatch, FillsEverySlotTimesEachStageAndCountsAFailedImage) {
    PipelineSteps steps;
    steps.resize = ResizeRule::shorter_side_crop;
    steps.input_size = {32, 32};
    steps.resize_shorter = 36;
    std::vector<EncodedImage> files;
    for (int i = 0; i < 5; ++i)
        files.push_back({"img" + std::to_string(i) + ".jpg", encode_jpeg(synthetic_image({80, 60}, 3, i), 90)});
    files[2].bytes.resize(files[2].bytes.size() / 2);  // truncated
    std::vector<const EncodedImage*> batch_images;
    for (const auto& f : files) batch_images.push_back(&f);
    std::vector<float> batch(5 * image_slot_bytes(steps) / sizeof(float), -99.0F);
    ThreadPool pool(2);
    PreprocessScratch scratch;
    const auto result = preprocess_batch(pool, batch_images, steps, std::as_writable_bytes(std::span(batch)), scratch);
    ASSERT_EQ(result.failures.size(), 1U);
    EXPECT_EQ(result.failures[0].slot, 2U);
    EXPECT_EQ(result.failures[0].kind, ImageErrorKind::corrupt);
    EXPECT_NE(result.failures[0].message.find("img2.jpg"), std::string::npos);
    for (const auto* stage : {&result.decode, &result.resize, &result.normalize}) {
        EXPECT_EQ(stage->images, 4);
        EXPECT_LE(stage->start_ns, stage->end_ns);
        EXPECT_NE(stage->cpu_ns, kStageNotMeasured);
    }
    EXPECT_EQ(result.decode.stage, PipelineStage::decode);
    EXPECT_LE(result.decode.start_ns, result.resize.start_ns);
    EXPECT_EQ(std::count(batch.begin(), batch.end(), -99.0F), 0);  // every slot written, the failed one black
    // Each good slot equals the image preprocessed alone.
    RgbImage decoded, resized;
    ResizeScratch resize_scratch;
    decode_image(files[4].bytes, "img4.jpg", decoded);
    resize_image(decoded, steps, resized, resize_scratch);
    std::vector<float> alone(image_slot_bytes(steps) / sizeof(float));
    normalize_into(resized, steps, std::as_writable_bytes(std::span(alone)), 0);
    EXPECT_TRUE(std::equal(alone.begin(), alone.end(), batch.begin() + 4 * static_cast<std::ptrdiff_t>(alone.size())));
}

TEST(PreprocessBatch, RefusesABatchTooSmall) {
    PipelineSteps steps;
    steps.input_size = {8, 8};
    const EncodedImage image{"a.png", encode_png(synthetic_image({8, 8}, 1, 0))};
    const EncodedImage* images[] = {&image, &image};
    std::vector<float> batch(image_slot_bytes(steps) / sizeof(float));
    ThreadPool pool(1);
    PreprocessScratch scratch;
    EXPECT_THROW(preprocess_batch(pool, images, steps, std::as_writable_bytes(std::span(batch)), scratch),
                 std::invalid_argument);
}

}  // namespace
}  // namespace inferbench::pipeline
