// Sizes of a model's inputs, computed from what the file declares: a shape whose bytes would wrap or
// could not be allocated is refused with one line naming the input, before any buffer is made.
#include <gtest/gtest.h>

#include <limits>

#include "backends/batch_shape.hpp"
#include "backends/npy_file.hpp"
#include "backends/random_inputs.hpp"
#include "common/scratch_dir.hpp"
#include "common/user_error.hpp"
#include "core/error.hpp"
#include "core/splitmix64.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {
namespace {

using testing::user_error;

// Exact products for the reference (a GCC and clang extension).
__extension__ typedef __int128 Wide;

constexpr std::int64_t k2to62 = std::int64_t{1} << 62;
constexpr std::int64_t k2to31 = std::int64_t{1} << 31;

TEST(InputSizes, AShapeWhoseBytesWrapIsRefusedBeforeAnyBufferIsMade) {
    // 4 * (2^62 + 16) wraps to 64 bytes: make_random_inputs once filled 2^62 elements into them.
    const std::vector<TensorInfo> wraps = {{"x", DType::f32, {1, k2to62 + 16}}};
    EXPECT_EQ(user_error([&] { make_random_inputs(wraps, 1); }).rfind("input x has shape [1, 4611686018427387920]: ", 0),
              0u);
    // 4 * 2^62 wraps to 0 bytes: a null buffer.
    const std::vector<TensorInfo> zero = {{"y", DType::f32, {1, k2to31, k2to31}}};
    EXPECT_EQ(user_error([&] { make_random_inputs(zero, 1); }).rfind("input y has shape [1, 2147483648, 2147483648]: ", 0),
              0u);
    EXPECT_THROW((void)zero[0].byte_size(), UserError);
    const TensorInfo overflow{"z", DType::i64, {k2to31, k2to31, k2to31}};
    EXPECT_NE(user_error([&] { (void)overflow.element_count(); }).find("overflows a 64-bit integer"), std::string::npos);
}

TEST(InputSizes, TheInputsTogetherAreCheckedToo) {
    const std::int64_t half = static_cast<std::int64_t>(kMaxTensorBytes / 2 / 4);
    const std::vector<TensorInfo> each_fits = {{"a", DType::f32, {half}}, {"b", DType::f32, {half}}};
    EXPECT_EQ(check_input_sizes(each_fits), kMaxTensorBytes);
    const std::vector<TensorInfo> too_many = {{"a", DType::f32, {half}}, {"b", DType::f32, {half}}, {"c", DType::u8, {1}}};
    EXPECT_EQ(user_error([&] { check_input_sizes(too_many); }).rfind("input c brings the inputs to more than 256 GiB", 0),
              0u);
}

TEST(InputSizes, TheBatchRuleRefusesAShapeThatOverflowsAtTheBatchSize) {
    const std::vector<std::int64_t> declared = {-1, k2to31, k2to31};
    EXPECT_EQ(user_error([&] { resolve_batch_shape(declared, 4, "big.onnx", "x"); })
                  .rfind("input x of model big.onnx has shape [4, 2147483648, 2147483648]: its element count overflows", 0),
              0u);
    EXPECT_EQ(resolve_batch_shape(std::vector<std::int64_t>{-1, 3, 224, 224}, 8, "m", "x"),
              (std::vector<std::int64_t>{8, 3, 224, 224}));
}

TEST(InputSizes, AnNpyHeaderWithAnOverflowingShapeIsRefused) {
    testing::ScratchDir scratch;
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387920, 1), }";
    header.append(64 - (10 + header.size() + 1) % 64, ' ');
    header.push_back('\n');
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes.push_back(static_cast<char>(header.size()));
    bytes.push_back('\0');
    scratch.write("big.npy", bytes + header + std::string(64, '\0'));
    const std::string error = user_error([&] { read_npy_file(scratch.path() / "big.npy", "x"); });
    EXPECT_EQ(error.rfind("the array in " + (scratch.path() / "big.npy").string() + " has shape [4611686018427387920, 1]",
                          0),
              0u)
        << error;
}

// Random and adversarial declared shapes through the batch rule and the byte size every backend stages
// inputs with: each is the exact size, or a UserError; never a wrapped size.
TEST(InputSizes, RandomDeclaredShapesGiveTheExactSizeOrARefusal) {
    SplitMix64 rng(2);
    const std::int64_t edges[] = {-1, 0, 1, 3, 224, k2to31, k2to62 + 16, std::numeric_limits<std::int64_t>::max()};
    int refused = 0;
    for (int round = 0; round < 5000; ++round) {
        std::vector<std::int64_t> declared(1 + rng.next() % 4);
        for (auto& d : declared)
            d = rng.next() % 3 == 0 ? edges[rng.next() % std::size(edges)]
                                    : static_cast<std::int64_t>(rng.next() >> (40 + rng.next() % 24));
        const std::int64_t batch = 1 + static_cast<std::int64_t>(rng.next() % 64);
        try {
            const TensorInfo info{"x", DType::f32, resolve_batch_shape(declared, batch, "m", "x")};
            Wide exact = 4;
            for (const auto d : info.shape) exact *= d;
            const std::size_t bytes = info.byte_size();
            EXPECT_EQ(static_cast<Wide>(bytes), exact);
            EXPECT_LE(bytes, kMaxTensorBytes);
        } catch (const UserError&) {
            ++refused;
        }
    }
    EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace inferbench
