// What a model says of its own precision: the float types of its values and the types its Q/DQ nodes quantize
// to, for a plain float32 model, its float16 and bfloat16 conversions and its int8 and FP8 QDQ models.
#include <filesystem>
#include <random>

#include <gtest/gtest.h>

#include "models/onnx_fp16.hpp"
#include "models/onnx_qdq.hpp"
#include "models/onnx_value_types.hpp"
#include "models/onnx_wire.hpp"
#include "transform_models.hpp"

namespace inferbench::models::onnx {
namespace {

namespace fs = std::filesystem;

class PrecisionTypesTest : public ::testing::Test {
protected:
    PrecisionTypesTest()
        : dir_(fs::temp_directory_path() / ("inferbench-precision-types-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
        auto g = testing::small_cnn();
        g.set_opset_version(kFloat8QdqOpset);
        path_ = testing::write_model(g, dir_ / "cnn.onnx");
    }
    ~PrecisionTypesTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    static ModelPrecisionTypes types_of(const std::string& bytes) {
        return model_precision_types(read_onnx(wire::as_bytes(bytes), "converted"));
    }
    fs::path dir_;
    fs::path path_;
};

TEST_F(PrecisionTypesTest, PlainModelIsFloat32Only) {
    const ModelPrecisionTypes t = model_precision_types(read_onnx_file(path_));
    EXPECT_EQ(t.float_types, (std::set<DataType>{DataType::float32}));
    EXPECT_TRUE(t.quantized_types.empty());
}

TEST_F(PrecisionTypesTest, ConversionsShowTheirFloatType) {
    Fp16Options options;
    options.keep_io_types = true;
    const ModelPrecisionTypes fp16 = types_of(convert_to_fp16(path_, options));
    EXPECT_TRUE(fp16.has_float(DataType::float16));
    EXPECT_TRUE(fp16.has_float(DataType::float32)) << "the kept graph inputs and outputs";
    EXPECT_FALSE(fp16.has_float(DataType::bfloat16));
    options.low_type = DataType::bfloat16;
    const ModelPrecisionTypes bf16 = types_of(convert_to_fp16(path_, options));
    EXPECT_TRUE(bf16.has_float(DataType::bfloat16));
    EXPECT_FALSE(bf16.has_float(DataType::float16));
}

TEST_F(PrecisionTypesTest, QdqModelsShowTheirQuantizedType) {
    const std::map<std::string, quant::QuantParams, std::less<>> ranges{{"images", {0.01F, 0}}, {"conv", {0.02F, 0}}};
    const ModelPrecisionTypes int8 = types_of(quantize_to_qdq(path_, ranges, {}));
    EXPECT_EQ(int8.quantized_types, (std::set<DataType>{DataType::int8, DataType::int32}))
        << "int8 activations and weights, int32 biases";
    const ModelPrecisionTypes fp8 =
        types_of(quantize_to_qdq(path_, ranges, {.activation = quant::ActivationType::float8e4m3}));
    EXPECT_EQ(fp8.quantized_types, (std::set<DataType>{DataType::float8e4m3fn}));
    EXPECT_TRUE(fp8.quantizes_to(DataType::float8e4m3fn));
}

}  // namespace
}  // namespace inferbench::models::onnx
