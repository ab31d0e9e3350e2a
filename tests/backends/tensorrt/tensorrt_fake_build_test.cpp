// The backend's engine builder run against the fake TensorRT library (fake_lib/), compiled once per major version
// (FAKE_TENSORRT_MAJOR 10 and 11): 10 builds from the plan's file with precision builder flags as before; 11 builds
// the precision-typed file with no precision flag (TF32 still cleared), and a precision flag never reaches it.
// Stand-ins only: no real TensorRT runs here.
#include <NvInfer.h>

#include <algorithm>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/tensorrt/tensorrt_engine_builder.hpp"
#include "backends/tensorrt/tensorrt_logger.hpp"
#include "backends/tensorrt/tensorrt_platform.hpp"
#include "backends/tensorrt/tensorrt_typed_onnx.hpp"
#include "backends/tensorrt/tensorrt_version.hpp"
#include "fake_lib/fake_nvinfer.hpp"
#include "models/transform_models.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr int kTf32Flag = 6;  // BuilderFlag::kTF32, the same number in 10 and 11
constexpr int kFp16Flag = 0;  // BuilderFlag::kFP16 of TensorRT 10

class FakeBuildTest : public ::testing::Test {
protected:
    FakeBuildTest()
        : dir_(fs::temp_directory_path() / ("inferbench-fake-build-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
        model_ = models::testing::write_model(models::testing::small_cnn(), dir_ / "cnn.onnx");
        fake_tensorrt::reset();
    }
    ~FakeBuildTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    static TensorRtVersion library() { return decode_tensorrt_version(getInferLibVersion()); }
    PrecisionPlan plan(Precision p) const { return plan_precision({p, "Fake GPU", {9, 0}, library(), false}); }
    std::string build(const fs::path& model, const PrecisionPlan& precision) {
        EngineBuildRequest r{model.string(), 2, precision, TensorRtOptions{}, dir_ / "timing.cache", 1};
        const std::vector<char> bytes = build_engine(r, logger_);
        return std::string(bytes.begin(), bytes.end());
    }
    static bool parsed_type(const std::string& type) {
        const auto& types = fake_tensorrt::last_build().model_types;
        return std::find(types.begin(), types.end(), type) != types.end();
    }
    fs::path dir_;
    fs::path model_;
    TensorRtLogger logger_;
};

// One suite name per major version, so that CTest tells the two executables' tests apart.
#if NV_TENSORRT_MAJOR >= 11
class FakeTensorRt11Build : public FakeBuildTest {};
#define FAKE_BUILD_TEST(name) TEST_F(FakeTensorRt11Build, name)
#else
class FakeTensorRt10Build : public FakeBuildTest {};
#define FAKE_BUILD_TEST(name) TEST_F(FakeTensorRt10Build, name)
#endif

FAKE_BUILD_TEST(LibraryReportsItsMajorVersion) {
    EXPECT_EQ(library().major, NV_TENSORRT_MAJOR);
    EXPECT_EQ(precision_route(library()),
              NV_TENSORRT_MAJOR >= 11 ? PrecisionRoute::typed_onnx : PrecisionRoute::builder_flags);
}

FAKE_BUILD_TEST(Fp32ClearsTf32AndSetsNothing) {
    const std::string engine = build(model_, plan(Precision::fp32));
    const auto& record = fake_tensorrt::last_build();
    EXPECT_TRUE(record.built);
    EXPECT_TRUE(record.flags_set.empty());
    EXPECT_TRUE(record.flags_cleared.contains(kTf32Flag));
    EXPECT_EQ(record.network_flags, 0U);
    EXPECT_THAT(engine, HasSubstr("fake TensorRT " + std::to_string(NV_TENSORRT_MAJOR)));
}

#if NV_TENSORRT_MAJOR >= 11

FAKE_BUILD_TEST(ElevenBuildsTheTypedFileWithoutPrecisionFlags) {
    const TypedOnnx typed = typed_onnx_for({model_, Precision::fp16, 2, 1, "", dir_.string()}, nullptr);
    const PrecisionPlan fp16 = plan(Precision::fp16);
    EXPECT_EQ(fp16.route, PrecisionRoute::typed_onnx);
    build(typed.path, fp16);
    const auto& record = fake_tensorrt::last_build();
    EXPECT_TRUE(record.built);
    EXPECT_EQ(record.parsed_model, typed.path.string());
    EXPECT_TRUE(parsed_type("float16")) << "the precision is in the file TensorRT parses";
    EXPECT_TRUE(record.flags_set.empty()) << "no precision builder flag on 11";
    EXPECT_TRUE(record.flags_cleared.contains(kTf32Flag));
    EXPECT_EQ(record.network_flags, 0U) << "strongly typed always; kSTRONGLY_TYPED is deprecated and ignored on 11";
    EXPECT_FALSE(record.calibrator_attached);
}

FAKE_BUILD_TEST(ElevenNeverReceivesAPrecisionFlag) {
    PrecisionPlan weak;
    weak.flags = {BuildFlag::fp16};
    EXPECT_THROW(build(model_, weak), std::logic_error);
    EXPECT_FALSE(fake_tensorrt::last_build().built);
    PrecisionPlan calibrated;
    calibrated.needs_calibrator = true;
    EXPECT_THROW(build(model_, calibrated), std::logic_error);
}

FAKE_BUILD_TEST(TheElevenStandInRefusesARemovedFlagAsElevenDoes) {
    const std::unique_ptr<nvinfer1::IBuilder> builder(nvinfer1::createInferBuilder(logger_));
    const std::unique_ptr<nvinfer1::INetworkDefinition> network(builder->createNetworkV2(0));
    const std::unique_ptr<nvinfer1::IBuilderConfig> config(builder->createBuilderConfig());
    config->setFlag(static_cast<nvinfer1::BuilderFlag>(kFp16Flag));
    EXPECT_EQ(builder->buildSerializedNetwork(*network, *config), nullptr);
    EXPECT_THAT(logger_.take_last_error(), HasSubstr("removed in TensorRT 11"));
}

#else

FAKE_BUILD_TEST(TenSetsThePrecisionFlagOnThePlansFile) {
    const PrecisionPlan fp16 = plan(Precision::fp16);
    EXPECT_EQ(fp16.route, PrecisionRoute::builder_flags);
    build(model_, fp16);
    const auto& record = fake_tensorrt::last_build();
    EXPECT_TRUE(record.built);
    EXPECT_EQ(record.parsed_model, model_.string()) << "the float32 file as given";
    EXPECT_FALSE(parsed_type("float16"));
    EXPECT_EQ(record.flags_set, (std::set<int>{kFp16Flag}));
    EXPECT_TRUE(record.flags_cleared.contains(kTf32Flag));
}

#endif

}  // namespace
}  // namespace inferbench
