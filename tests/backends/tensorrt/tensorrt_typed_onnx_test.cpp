// TensorRT 11's precision-typed ONNX file: fp32 as given, fp16/bf16 converted, int8/fp8 Q/DQ calibrated on a
// float32 reference (a stand-in here that returns known activations), every converted file cached, and a user's
// already-typed file used as given when it matches the plan's precision and refused in one line when it does not.
#include "backends/tensorrt/tensorrt_typed_onnx.hpp"

#include <cstring>
#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/tensorrt/tensorrt_calibration_data.hpp"
#include "core/error.hpp"
#include "models/onnx_fp16.hpp"
#include "models/onnx_qdq.hpp"
#include "models/onnx_reader.hpp"
#include "models/onnx_value_types.hpp"
#include "models/transform_models.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
namespace onnx = models::onnx;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Answers every activation with the same known values, and records what it was asked.
class KnownActivations final : public Fp32Reference {
public:
    std::string identity() const override { return "known activations"; }
    std::vector<std::vector<float>> run(const fs::path& model, std::span<const HostTensor> batch,
                                        std::span<const std::string> outputs) override {
        ++runs;
        last_outputs.assign(outputs.begin(), outputs.end());
        const auto graph_outputs = onnx::read_onnx_signature(model).outputs;
        for (const auto& name : outputs) {
            const bool exposed = std::any_of(graph_outputs.begin(), graph_outputs.end(),
                                             [&](const onnx::OnnxValueInfo& o) { return o.name == name; });
            EXPECT_TRUE(exposed) << name << " is not an output of the model the reference runs";
        }
        batch_shape = batch.empty() ? std::vector<std::int64_t>{} : batch.front().info.shape;
        return std::vector<std::vector<float>>(outputs.size(), std::vector<float>{-3.0F, 0.5F, 1.0F, 2.0F});
    }
    int runs = 0;
    std::vector<std::string> last_outputs;
    std::vector<std::int64_t> batch_shape;
};

class TypedOnnxTest : public ::testing::Test {
protected:
    TypedOnnxTest()
        : dir_(fs::temp_directory_path() / ("inferbench-typed-onnx-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_ / "cache");
        auto g = models::testing::small_cnn();
        g.set_opset_version(onnx::kFloat8QdqOpset);
        model_ = models::testing::write_model(g, dir_ / "cnn.onnx");
    }
    ~TypedOnnxTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    TypedOnnxRequest request(Precision p, const fs::path& model) const {
        TypedOnnxRequest r;
        r.model = model;
        r.precision = p;
        r.batch_size = 2;
        r.seed = 7;
        r.model_cache_dir = (dir_ / "cache").string();
        return r;
    }
    TypedOnnxRequest request(Precision p) const { return request(p, model_); }
    static onnx::ModelPrecisionTypes types_of(const fs::path& file) {
        return onnx::model_precision_types(onnx::read_onnx_file(file));
    }
    fs::path write(const std::string& bytes, const std::string& name) const {
        std::ofstream(dir_ / name, std::ios::binary) << bytes;
        return dir_ / name;
    }
    fs::path dir_;
    fs::path model_;
};

TEST_F(TypedOnnxTest, Fp32IsTheModelAsGiven) {
    const TypedOnnx typed = typed_onnx_for(request(Precision::fp32), nullptr);
    EXPECT_EQ(typed.path, model_);
    EXPECT_EQ(typed.origin, TypedOnnxOrigin::as_given);
}

TEST_F(TypedOnnxTest, Fp16AndBf16AreConvertedWithFloat32InputsAndCached) {
    const TypedOnnx fp16 = typed_onnx_for(request(Precision::fp16), nullptr);
    EXPECT_EQ(fp16.origin, TypedOnnxOrigin::converted);
    EXPECT_NE(fp16.path, model_);
    EXPECT_TRUE(types_of(fp16.path).has_float(onnx::DataType::float16));
    EXPECT_EQ(onnx::read_onnx_signature(fp16.path).inputs[0].elem_type, onnx::DataType::float32);
    EXPECT_THAT(fp16.description, AllOf(HasSubstr("fp16"), HasSubstr(fp16.path.string())));
    const auto written = fs::last_write_time(fp16.path);
    EXPECT_EQ(typed_onnx_for(request(Precision::fp16), nullptr).path, fp16.path);
    EXPECT_EQ(fs::last_write_time(fp16.path), written) << "the cached file is reused, not rewritten";

    const TypedOnnx bf16 = typed_onnx_for(request(Precision::bf16), nullptr);
    EXPECT_NE(bf16.path, fp16.path);
    EXPECT_TRUE(types_of(bf16.path).has_float(onnx::DataType::bfloat16));
    EXPECT_FALSE(types_of(bf16.path).has_float(onnx::DataType::float16));
}

TEST_F(TypedOnnxTest, Int8IsCalibratedOnTheReferenceAndCached) {
    KnownActivations reference;
    const TypedOnnx int8 = typed_onnx_for(request(Precision::int8), &reference);
    EXPECT_EQ(int8.origin, TypedOnnxOrigin::converted);
    EXPECT_EQ(types_of(int8.path).quantized_types, (std::set<onnx::DataType>{onnx::DataType::int8}))
        << "int8 activations and weights; biases stay float for TensorRT";
    EXPECT_EQ(reference.last_outputs, (std::vector<std::string>{"conv", "flat"})) << "the graph input is fed, not run";
    EXPECT_EQ(reference.runs, static_cast<int>(kRandomCalibrationBatches)) << "min/max: one pass over the batches";
    EXPECT_EQ(reference.batch_shape, (std::vector<std::int64_t>{2, 3, 8, 8})) << "the request's batch";
    EXPECT_THAT(int8.description,
                AllOf(HasSubstr("minmax"), HasSubstr("seeded random"), HasSubstr("known activations")));

    // The activation scales are the reference's range (|x| <= 3), the input's the seeded data's (|x| < 1).
    const onnx::OnnxGraph g = onnx::read_onnx_file(int8.path).graph;
    for (const auto& t : g.initializers) {
        if (t.name.find("_scale") == std::string::npos || !t.dims.empty()) continue;
        float scale = 0;
        std::memcpy(&scale, t.raw.data(), sizeof scale);
        EXPECT_GT(scale, 0.0F) << t.name;
        EXPECT_LE(scale, 3.0F / 127.0F * 1.001F) << t.name;
        if (!t.name.starts_with("images")) continue;
        EXPECT_LE(scale, 1.0F / 127.0F * 1.001F);
    }
    EXPECT_EQ(typed_onnx_for(request(Precision::int8), &reference).path, int8.path);
    EXPECT_EQ(reference.runs, static_cast<int>(kRandomCalibrationBatches)) << "cached: no second calibration";
}

TEST_F(TypedOnnxTest, Fp8NeedsOpset19) {
    KnownActivations reference;
    const TypedOnnx fp8 = typed_onnx_for(request(Precision::fp8), &reference);
    EXPECT_TRUE(types_of(fp8.path).quantizes_to(onnx::DataType::float8e4m3fn));
    const fs::path old = models::testing::write_model(models::testing::small_cnn(), dir_ / "opset7.onnx");
    EXPECT_THAT(typed_onnx_problem(request(Precision::fp8, old), true).value_or(""),
                AllOf(HasSubstr("opset 19"), HasSubstr("opset7.onnx")));
    EXPECT_THROW(typed_onnx_for(request(Precision::fp8, old), &reference), UserError);
}

TEST_F(TypedOnnxTest, QuantizedPrecisionsWithoutAReferenceAreRefusedBeforeRunning) {
    EXPECT_EQ(typed_onnx_problem(request(Precision::fp16), false), std::nullopt);
    const auto problem = typed_onnx_problem(request(Precision::int8), false);
    EXPECT_THAT(problem.value_or(""),
                AllOf(HasSubstr("int8"), HasSubstr("float32 run"), HasSubstr("already quantized")));
    EXPECT_THROW(typed_onnx_for(request(Precision::int8), nullptr), UserError);
    EXPECT_THAT(typed_onnx_problem(request(Precision::int4), true).value_or(""), HasSubstr("int4"));
    EXPECT_EQ(typed_onnx_mismatch(request(Precision::int8)), std::nullopt)
        << "a float32 file is converted, not refused";
}

TEST_F(TypedOnnxTest, UserTypedFileIsUsedAsGivenWhenItMatches) {
    onnx::Fp16Options options;
    const fs::path typed = write(onnx::convert_to_fp16(model_, options), "user_fp16.onnx");
    const TypedOnnx given = typed_onnx_for(request(Precision::fp16, typed), nullptr);
    EXPECT_EQ(given.origin, TypedOnnxOrigin::user_typed);
    EXPECT_EQ(given.path, typed);
    EXPECT_THAT(given.description, HasSubstr("float16 tensors"));
    const std::map<std::string, models::quant::QuantParams, std::less<>> ranges{{"images", {0.01F, 0}}};
    const fs::path qdq = write(onnx::quantize_to_qdq(model_, ranges, {}), "user_int8.onnx");
    EXPECT_EQ(typed_onnx_for(request(Precision::int8, qdq), nullptr).origin, TypedOnnxOrigin::user_typed)
        << "a user's Q/DQ file needs no reference";
}

TEST_F(TypedOnnxTest, UserTypedFileThatDisagreesIsOneLine) {
    const fs::path typed = write(onnx::convert_to_fp16(model_, {}), "user_fp16.onnx");
    for (const Precision p : {Precision::fp32, Precision::int8, Precision::bf16}) {
        const auto problem = typed_onnx_problem(request(p, typed), true);
        ASSERT_TRUE(problem) << to_string(p);
        EXPECT_THAT(*problem, AllOf(HasSubstr("user_fp16.onnx"), HasSubstr("already typed fp16"),
                                    HasSubstr(std::string("precision ") + std::string(to_string(p))),
                                    HasSubstr("set precision: fp16")));
        EXPECT_EQ(problem->find('\n'), std::string::npos);
        EXPECT_EQ(typed_onnx_mismatch(request(p, typed)), problem) << "bad input, not a limit of the machine";
        KnownActivations reference;
        EXPECT_THROW(typed_onnx_for(request(p, typed), &reference), UserError);
        EXPECT_EQ(reference.runs, 0);
    }
}

TEST_F(TypedOnnxTest, CalibrationFolderThatDoesNotFitIsAUserError) {
    fs::create_directories(dir_ / "calibration");
    std::ofstream(dir_ / "calibration" / "0.bin", std::ios::binary) << "too short";
    TypedOnnxRequest r = request(Precision::int8);
    r.calibration_dir = (dir_ / "calibration").string();
    KnownActivations reference;
    EXPECT_THROW(typed_onnx_for(r, &reference), UserError);
    EXPECT_EQ(reference.runs, 0);
}

}  // namespace
}  // namespace inferbench
