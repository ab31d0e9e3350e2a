// int8 calibration data: seeded random batches, raw batches from a folder, and their identity in the key.
#include "backends/tensorrt/tensorrt_calibration_data.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "core/fnv1a.hpp"

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const TensorInfo kImage{"images", DType::f32, {2, 3, 4, 4}};
const TensorInfo kTokens{"ids", DType::i64, {2, 16}};

template <typename T>
std::vector<T> values(const HostTensor& tensor) {
    std::vector<T> out(tensor.data.size() / sizeof(T));
    std::memcpy(out.data(), tensor.data.data(), tensor.data.size());
    return out;
}

std::string user_error(const std::function<void()>& f) {
    try {
        f();
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(TensorRtCalibration, RandomBatchesHaveTheInputsShapesAndTypes) {
    const CalibrationData data = CalibrationData::random({kImage, kTokens}, 42);
    EXPECT_EQ(data.batch_count(), kRandomCalibrationBatches);
    const std::vector<HostTensor> batch = data.batch(0);
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].info.name, "images");
    EXPECT_EQ(batch[0].data.size(), 2u * 3 * 4 * 4 * 4);
    EXPECT_EQ(batch[1].data.size(), 2u * 16 * 8);
    for (float v : values<float>(batch[0])) ASSERT_TRUE(v >= -1.0f && v < 1.0f) << v;
    for (std::int64_t v : values<std::int64_t>(batch[1])) ASSERT_TRUE(v >= 0 && v < 100) << v;
    EXPECT_THROW(data.batch(kRandomCalibrationBatches), std::out_of_range);
}

TEST(TensorRtCalibration, RandomBatchesAreSeeded) {
    const CalibrationData a = CalibrationData::random({kImage}, 42, 2);
    const CalibrationData again = CalibrationData::random({kImage}, 42, 2);
    const CalibrationData b = CalibrationData::random({kImage}, 43, 2);
    EXPECT_EQ(a.batch(0)[0].data, again.batch(0)[0].data);
    EXPECT_EQ(a.batch(1)[0].data, again.batch(1)[0].data);
    EXPECT_NE(a.batch(0)[0].data, a.batch(1)[0].data) << "batches differ";
    EXPECT_NE(a.batch(0)[0].data, b.batch(0)[0].data) << "seeds differ";
    EXPECT_NE(a.batch(1)[0].data, b.batch(0)[0].data) << "seed s batch 1 is not seed s+1 batch 0";
}

// Calibrating with the same seed gives the same engine: the bytes of a seed are pinned.
TEST(TensorRtCalibration, RandomBytesOfASeedArePinned) {
    std::uint64_t digest = kFnv1aOffsetBasis;
    for (const TensorInfo& info : {kImage, kTokens, TensorInfo{"h", DType::f16, {16}}}) {
        const std::vector<std::byte> bytes = random_tensor_bytes(info, 11);
        digest = fnv1a64({reinterpret_cast<const char*>(bytes.data()), bytes.size()}, digest);
    }
    EXPECT_EQ(digest, 0xE33649A448D94510ULL);
}

TEST(TensorRtCalibration, RandomValuesOfEveryType) {
    for (DType dtype : {DType::f16, DType::bf16, DType::f64, DType::i8, DType::u8, DType::i32, DType::boolean}) {
        const TensorInfo info{"x", dtype, {64}};
        const std::vector<std::byte> bytes = random_tensor_bytes(info, 1);
        EXPECT_EQ(bytes.size(), info.byte_size()) << to_string(dtype);
        EXPECT_EQ(bytes, random_tensor_bytes(info, 1)) << to_string(dtype);
    }
    const std::vector<std::byte> flags = random_tensor_bytes({"m", DType::boolean, {256}}, 3);
    for (std::byte b : flags) ASSERT_LE(std::to_integer<int>(b), 1);
    const std::vector<std::byte> halves = random_tensor_bytes({"h", DType::f16, {256}}, 3);
    for (std::size_t i = 0; i < halves.size(); i += 2) {
        const int high = std::to_integer<int>(halves[i + 1]) & 0x7f;  // little-endian: exponent bits in the high byte
        ASSERT_LT(high, 0x3c) << "|value| < 1.0";
    }
}

TEST(TensorRtCalibration, HalfAndBfloat16RoundToNearestEven) {
    EXPECT_EQ(float_to_half(1.0f), 0x3c00);
    EXPECT_EQ(float_to_half(-0.5f), 0xb800);
    EXPECT_EQ(float_to_half(0.1f), 0x2e66);
    EXPECT_EQ(float_to_half(65504.0f), 0x7bff);
    EXPECT_EQ(float_to_half(2049.0f), 0x6800);  // a tie goes to the even 2048
    EXPECT_EQ(float_to_half(2051.0f), 0x6802);  // and this one to 2052
    EXPECT_EQ(float_to_half(6.1035156e-05f), 0x0400);
    EXPECT_EQ(float_to_half(1e-6f), 0x0000);
    EXPECT_EQ(float_to_half(-1e-6f), 0x8000);
    EXPECT_EQ(float_to_half(1e6f), 0x7c00);
    EXPECT_EQ(float_to_bfloat16(1.0f), 0x3f80);
    EXPECT_EQ(float_to_bfloat16(-0.5f), 0xbf00);
    EXPECT_EQ(float_to_bfloat16(0.1f), 0x3dcd);
    EXPECT_EQ(float_to_bfloat16(3.14159f), 0x4049);
}

TEST(TensorRtCalibration, FolderBatchesAreTakenInNameOrderOneFilePerInput) {
    const testing::ScratchDir dir;
    const TensorInfo a{"a", DType::u8, {1, 4}};
    const TensorInfo b{"b", DType::u8, {1, 2}};
    dir.write("000_a.bin", "AAAA");
    dir.write("001_b.bin", "bb");
    dir.write("002_a.bin", "CCCC");
    dir.write("003_b.bin", "dd");
    dir.write("notes.txt", "ignored");
    const CalibrationData data = CalibrationData::from_dir({a, b}, dir.path());
    ASSERT_EQ(data.batch_count(), 2u);
    const auto text = [](const HostTensor& t) { return std::string(reinterpret_cast<const char*>(t.data.data()), t.data.size()); };
    EXPECT_EQ(text(data.batch(0)[0]), "AAAA");
    EXPECT_EQ(text(data.batch(0)[1]), "bb");
    EXPECT_EQ(text(data.batch(1)[0]), "CCCC");
    EXPECT_EQ(text(data.batch(1)[1]), "dd");
}

TEST(TensorRtCalibration, FolderErrorsNameTheFileAndWhatIsExpected) {
    const testing::ScratchDir dir;
    const TensorInfo image{"images", DType::f32, {1, 2}};
    EXPECT_THAT(user_error([&] { CalibrationData::from_dir({image}, dir.path() / "absent"); }), HasSubstr("is not a folder"));
    EXPECT_THAT(user_error([&] { CalibrationData::from_dir({image}, dir.path()); }), HasSubstr("no .bin files"));
    dir.write("0.bin", "12345");
    EXPECT_THAT(user_error([&] { CalibrationData::from_dir({image}, dir.path()); }),
                AllOf(HasSubstr("0.bin"), HasSubstr("holds 5 bytes"), HasSubstr("input images needs 8"),
                      HasSubstr("float32 of shape [1,2]")));
    dir.write("0.bin", "12345678");
    EXPECT_NO_THROW(CalibrationData::from_dir({image}, dir.path()));
    EXPECT_THAT(user_error([&] { CalibrationData::from_dir({image, image}, dir.path()); }),
                AllOf(HasSubstr("1 .bin files for a model with 2 inputs"), HasSubstr("one file per input per batch")));
}

TEST(TensorRtCalibration, IdentityChangesWithTheSeedOrTheFolder) {
    EXPECT_EQ(calibration_identity("", 42), "random seed=42 batches=4");
    EXPECT_NE(calibration_identity("", 42), calibration_identity("", 43));
    const testing::ScratchDir dir;
    dir.write("0.bin", "1234");
    const std::string before = calibration_identity(dir.path().string(), 42);
    EXPECT_THAT(before, AllOf(HasSubstr("dir="), HasSubstr("files=1"), HasSubstr("listing=")));
    EXPECT_EQ(calibration_identity(dir.path().string(), 7), before) << "the seed does not matter for real data";
    dir.write("1.bin", "5678");
    EXPECT_NE(calibration_identity(dir.path().string(), 42), before);
    EXPECT_THROW(calibration_identity((dir.path() / "absent").string(), 42), UserError);
}

}  // namespace
}  // namespace inferbench
