// TensorRT 11's precision-typed files (backends/tensorrt/tensorrt_typed_onnx) checked by an independent runtime:
// calibrated on a float32 reference that is ONNX Runtime's CPU provider (not a stand-in), then run by ONNX
// Runtime next to the float32 model. The fp16, int8 and FP8 files must load and agree with float32 within
// what their precision allows. (TensorRT itself is not run here; these are the files it would be given.)
#include "backends/tensorrt/tensorrt_typed_onnx.hpp"

#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "backends/onnxruntime/onnxruntime_backend.hpp"
#include "backends/output_agreement.hpp"
#include "backends/random_inputs.hpp"
#include "models/onnx_qdq.hpp"
#include "models/transform_models.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;

// Graph optimisation off: the files are checked as written (Q/DQ pairs run as they are, as TensorRT reads them).
// ONNX Runtime 1.2x's QDQ fusion would also turn FP8 pairs into a QLinearConv, which has no FP8 kernel.
BenchmarkSpec cpu_spec(std::int64_t batch) {
    BenchmarkSpec spec;
    spec.backend = "onnxruntime";
    spec.batch_size = batch;
    spec.seed = 5;
    spec.backend_options = {{"graph_optimization", "disable"}};
    return spec;
}

// The float32 model run by ONNX Runtime on the CPU, the way the tensorrt backend runs an fp32 engine.
class OrtReference final : public Fp32Reference {
public:
    std::string identity() const override { return "ONNX Runtime CPU fp32"; }
    std::vector<std::vector<float>> run(const fs::path& model, std::span<const HostTensor> batch,
                                        std::span<const std::string> outputs) override {
        OnnxRuntimeBackend backend;
        backend.load(model.string(), cpu_spec(batch.front().info.shape.front()));
        backend.prepare(batch);
        DeviceTimes times;
        backend.infer(times);
        const std::vector<HostTensor> produced = backend.last_outputs();
        std::vector<std::vector<float>> values;
        for (const auto& name : outputs) {
            const auto it = std::find_if(produced.begin(), produced.end(),
                                         [&](const HostTensor& t) { return t.info.name == name; });
            EXPECT_NE(it, produced.end()) << name;
            const auto* first = reinterpret_cast<const float*>(it->data.data());
            values.emplace_back(first, first + it->data.size() / sizeof(float));
        }
        ++runs;
        return values;
    }
    int runs = 0;
};

class TypedOnnxOrtTest : public ::testing::Test {
protected:
    TypedOnnxOrtTest()
        : dir_(fs::temp_directory_path() / ("inferbench-typed-ort-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
        auto g = models::testing::small_cnn();
        g.set_opset_version(models::onnx::kFloat8QdqOpset);
        model_ = models::testing::write_model(g, dir_ / "cnn.onnx");
    }
    ~TypedOnnxOrtTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    // The file's outputs on inputs it was not calibrated on.
    static std::vector<HostTensor> outputs_of(const fs::path& model) {
        OnnxRuntimeBackend backend;
        const BenchmarkSpec spec = cpu_spec(2);
        backend.load(model.string(), spec);
        backend.prepare(make_random_inputs(backend.inputs(), 1234));
        DeviceTimes times;
        backend.infer(times);
        return backend.last_outputs();
    }
    TypedOnnx typed(Precision p, OrtReference* reference) {
        return typed_onnx_for({model_, p, 2, 5, "", (dir_ / "cache").string()}, reference);
    }
    fs::path dir_;
    fs::path model_;
    OnnxRuntimeBackend init_;  // its constructor initialises ONNX Runtime's API
};

void expect_agreement(const std::vector<HostTensor>& checked, const std::vector<HostTensor>& reference, double share) {
    const auto agreement = compare_outputs(checked, reference);
    ASSERT_EQ(agreement.size(), 1U);
    EXPECT_TRUE(agreement[0].problem.empty()) << agreement[0].problem;
    EXPECT_GT(agreement[0].reference_max, 0.0);
    EXPECT_LE(agreement[0].max_abs_error, share * agreement[0].reference_max)
        << "max error " << agreement[0].max_abs_error << " of " << agreement[0].reference_max;
}

TEST_F(TypedOnnxOrtTest, Fp16FileAgreesWithFloat32) {
    expect_agreement(outputs_of(typed(Precision::fp16, nullptr).path), outputs_of(model_), 0.01);
}

TEST_F(TypedOnnxOrtTest, Int8FileCalibratedOnOnnxRuntimeAgreesWithFloat32) {
    OrtReference reference;
    const TypedOnnx int8 = typed(Precision::int8, &reference);
    EXPECT_GT(reference.runs, 0);
    expect_agreement(outputs_of(int8.path), outputs_of(model_), 0.05);
}

TEST_F(TypedOnnxOrtTest, Fp8FileRunsAndAgreesWithFloat32) {
    OrtReference reference;
    const TypedOnnx fp8 = typed(Precision::fp8, &reference);
    // E4M3 keeps 3 mantissa bits: a step is up to 1/16 of a value, and input and weight errors add up.
    expect_agreement(outputs_of(fp8.path), outputs_of(model_), 0.15);
}

}  // namespace
}  // namespace inferbench
