// TensorRT's version: both encodings of getInferLibVersion(), text, order, the newest known major and the
// precision route each major takes.
#include "backends/tensorrt/tensorrt_version.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace inferbench {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(TensorRtVersion, DecodesElevenLikeTen) {
    EXPECT_EQ(to_string(decode_tensorrt_version(110000)), "11.0.0");
    EXPECT_EQ(to_string(decode_tensorrt_version(110402)), "11.4.2");
    EXPECT_EQ(to_string(decode_tensorrt_version(100800)), "10.8.0");
}

TEST(TensorRtVersion, ParsesText) {
    EXPECT_EQ(parse_tensorrt_version("10.8.0"), (TensorRtVersion{10, 8, 0}));
    EXPECT_EQ(parse_tensorrt_version("11.0.0.12"), (TensorRtVersion{11, 0, 0}));
    EXPECT_EQ(parse_tensorrt_version(" 10.13 \n"), (TensorRtVersion{10, 13, 0}));
    EXPECT_EQ(parse_tensorrt_version("8.6.1.6"), (TensorRtVersion{8, 6, 1}));
}

TEST(TensorRtVersion, RefusesTextThatIsNotAVersion) {
    for (const char* text : {"", "10", "10.", ".8", "10..0", "10.8.0.1.2", "v10.8", "10.x", "ten.eight", "10.8-rc"})
        EXPECT_EQ(parse_tensorrt_version(text), std::nullopt) << text;
}

TEST(TensorRtVersion, OrdersByMajorMinorPatch) {
    EXPECT_LT((TensorRtVersion{10, 13, 9}), (TensorRtVersion{11, 0, 0}));
    EXPECT_LT((TensorRtVersion{10, 8, 0}), (TensorRtVersion{10, 13, 0}));
    EXPECT_LT((TensorRtVersion{11, 0, 0}), (TensorRtVersion{11, 0, 1}));
    EXPECT_EQ((TensorRtVersion{11, 0, 0}), *parse_tensorrt_version("11.0"));
}

TEST(TensorRtVersion, NewerMajorThanKnownIsRefusedInOneLine) {
    EXPECT_FALSE(newer_than_known({10, 13, 0}));
    EXPECT_FALSE(newer_than_known(kNewestKnownTensorRt));
    EXPECT_FALSE(newer_than_known({kNewestKnownTensorRt.major, kNewestKnownTensorRt.minor + 3, 0}));
    EXPECT_EQ(unknown_version_problem({11, 0, 0}, "libnvinfer"), std::nullopt);
    const TensorRtVersion next{kNewestKnownTensorRt.major + 1, 0, 0};
    ASSERT_TRUE(newer_than_known(next));
    const auto problem = unknown_version_problem(next, "trtexec --version");
    ASSERT_TRUE(problem);
    EXPECT_THAT(*problem, AllOf(HasSubstr("TensorRT 12.0.0 (trtexec --version)"), HasSubstr("newer"),
                                HasSubstr("use TensorRT 11.x or older")));
    EXPECT_EQ(problem->find('\n'), std::string::npos);
}

TEST(TensorRtVersion, ElevenTakesPrecisionFromTheOnnxFile) {
    EXPECT_EQ(precision_route({8, 6, 1}), PrecisionRoute::builder_flags);
    EXPECT_EQ(precision_route({10, 13, 0}), PrecisionRoute::builder_flags);
    EXPECT_EQ(precision_route({11, 0, 0}), PrecisionRoute::typed_onnx);
    EXPECT_EQ(precision_route({11, 5, 0}), PrecisionRoute::typed_onnx);
}

}  // namespace
}  // namespace inferbench
