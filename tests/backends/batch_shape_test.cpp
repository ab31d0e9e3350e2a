// The batch rule every backend applies to declared input shapes (backends/batch_shape.hpp).
#include "backends/batch_shape.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"

namespace inferbench {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The UserError resolve_batch_shape throws, or "(no error)".
std::string shape_error(const DeclaredShape& declared, std::int64_t batch, std::string_view other_fix = {}) {
    try {
        resolve_batch_shape(declared, batch, "m.onnx", "x", other_fix);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(BatchShape, DynamicFirstDimensionBecomesTheBatch) {
    const std::vector<std::int64_t> declared = {-1, 3, 224, 224};
    EXPECT_THAT(resolve_batch_shape(declared, 8, "m.onnx", "x"), ElementsAre(8, 3, 224, 224));
    EXPECT_TRUE(has_dynamic_batch(declared));
    EXPECT_THAT(resolve_batch_shape(DeclaredShape{{-1, 10}, {"batch", ""}}, 1, "m.onnx", "x"), ElementsAre(1, 10));
}

TEST(BatchShape, FixedBatchRunsOnlyItsOwnSize) {
    const std::vector<std::int64_t> declared = {1, 4};
    EXPECT_THAT(resolve_batch_shape(declared, 1, "m.onnx", "x"), ElementsAre(1, 4));
    EXPECT_FALSE(has_dynamic_batch(declared));
    EXPECT_EQ(shape_error({{1, 4}, {}}, 8),
              "input x of model m.onnx has a fixed batch size of 1; to run batch size 8, export the model with a "
              "dynamic first (batch) dimension");
}

TEST(BatchShape, OnlyTheFirstDimensionMayBeDynamic) {
    EXPECT_EQ(shape_error({{-1, -1}, {"batch", "features"}}, 2),
              "input x of model m.onnx has a dynamic dimension 1 ('features'); only the first (batch) dimension may "
              "be dynamic, so export the model with static shapes for the others");
    EXPECT_THAT(shape_error({{4, 3, -1}, {}}, 4), HasSubstr("has a dynamic dimension 2; only the first"));
    // A dynamic later dimension is named even when the batch is fixed and right: it is the one to fix.
    EXPECT_THAT(shape_error({{2, -1}, {}}, 2), HasSubstr("dynamic dimension 1"));
    EXPECT_THAT(shape_error({{-1, -1}, {}}, 2, "give the shapes in extra_args"),
                HasSubstr("static shapes for the others, or give the shapes in extra_args"));
}

TEST(BatchShape, ScalarIsFedAsItIsAtAnyBatch) {
    const std::vector<std::int64_t> scalar;
    EXPECT_THAT(resolve_batch_shape(scalar, 1, "m.onnx", "x"), IsEmpty());
    EXPECT_THAT(resolve_batch_shape(scalar, 8, "m.onnx", "x"), IsEmpty());
    EXPECT_FALSE(has_dynamic_batch(scalar));
}

}  // namespace
}  // namespace inferbench
