// fp16 and int8 models made for onnxruntime cells, run on ONNX Runtime's CPU execution provider against the
// float32 model: one-op models per quantized op family, real exports, zoo classifiers, the cache, and
// calibration data from .npy files.
#include "backends/onnxruntime/ort_model_conversion.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/onnxruntime/onnxruntime_backend.hpp"
#include "backends/onnxruntime/ort_cpu_int8.hpp"
#include "backends/output_agreement.hpp"
#include "backends/random_inputs.hpp"
#include "common/npz_writer.hpp"
#include "core/error.hpp"
#include "models/onnx_builder.hpp"
#include "models/onnx_reader.hpp"
#include "models/zoo.hpp"
#include "telemetry/telemetry_env.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using models::GraphBuilder;
using models::OnnxDim;
using models::OnnxElemType;
using ::testing::HasSubstr;

const OnnxDim kBatch = OnnxDim::symbolic("batch");

std::vector<float> weights(std::size_t n, std::uint64_t seed) {
    models::WeightGenerator g(seed);
    std::vector<float> v(n);
    for (auto& x : v) x = g.symmetric(0.5F);
    return v;
}

GraphBuilder conv_model() {
    GraphBuilder g("conv", 1);
    g.add_input("x", OnnxElemType::float32, {kBatch, OnnxDim::fixed(4), OnnxDim::fixed(10), OnnxDim::fixed(10)});
    g.rename_value(g.conv("conv", "x", 4, 6, {.kernel = 3, .pad = 1, .bias = true}), "y");
    g.add_output("y", OnnxElemType::float32, {kBatch, OnnxDim::fixed(6), OnnxDim::fixed(10), OnnxDim::fixed(10)});
    return g;
}

// y = Flatten(x): data movement, which ONNX Runtime's CPU provider runs at any type, float16 too.
GraphBuilder flatten_model() {
    GraphBuilder g("flatten", 5);
    g.add_input("x", OnnxElemType::float32, {kBatch, OnnxDim::fixed(4), OnnxDim::fixed(4)});
    g.rename_value(g.flatten("flatten", "x"), "y");
    g.add_output("y", OnnxElemType::float32, {kBatch, OnnxDim::fixed(16)});
    return g;
}

GraphBuilder matmul_model() {
    GraphBuilder g("matmul", 2);
    g.add_input("x", OnnxElemType::float32, {kBatch, OnnxDim::fixed(16), OnnxDim::fixed(32)});
    g.add_initializer({"w", {32, 24}, weights(32 * 24, 2)});
    g.add_node({"MatMul", "matmul", {"x", "w"}, {"y"}, {}});
    g.add_output("y", OnnxElemType::float32, {kBatch, OnnxDim::fixed(16), OnnxDim::fixed(24)});
    return g;
}

GraphBuilder gemm_model() {
    GraphBuilder g("gemm", 3);
    g.add_input("x", OnnxElemType::float32, {kBatch, OnnxDim::fixed(32)});
    g.rename_value(g.gemm("fc", "x", 32, 10), "y");
    g.add_output("y", OnnxElemType::float32, {kBatch, OnnxDim::fixed(10)});
    return g;
}

// Conv -> Add (residual) -> Relu -> Conv: the float ops between quantized ones.
GraphBuilder residual_model() {
    GraphBuilder g("residual", 4);
    g.add_input("x", OnnxElemType::float32, {kBatch, OnnxDim::fixed(4), OnnxDim::fixed(8), OnnxDim::fixed(8)});
    std::string y = g.conv("conv1", "x", 4, 4, {.kernel = 3, .pad = 1, .bias = true});
    y = g.add("add", y, "x");
    y = g.relu("relu", y);
    g.rename_value(g.conv("conv2", y, 4, 8, {.kernel = 1, .bias = true}), "y");
    g.add_output("y", OnnxElemType::float32, {kBatch, OnnxDim::fixed(8), OnnxDim::fixed(8), OnnxDim::fixed(8)});
    return g;
}

class OrtPrecisionTest : public ::testing::Test {
protected:
    OrtPrecisionTest() : dir_(fs::temp_directory_path() / ("inferbench-ort-precision-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
        spec_.backend = "onnxruntime";
        spec_.batch_size = 2;
        spec_.seed = 11;
        spec_.model_cache_dir = (dir_ / "cache").string();
    }
    ~OrtPrecisionTest() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }

    fs::path write(const GraphBuilder& g) {
        const fs::path path = dir_ / (g.graph_name() + ".onnx");
        std::ofstream(path, std::ios::binary) << g.serialize();
        return path;
    }

    ConvertedModel convert(const fs::path& model, Precision precision, const OptionMap& options = {}) {
        spec_.precision = precision;
        spec_.backend_options = options;
        return backend_.convert_model(model.string(), spec_);
    }

    // The model's outputs on the benchmark's seeded inputs (another seed than calibration's first batches).
    std::vector<HostTensor> run(const std::string& model) {
        OnnxRuntimeBackend backend;
        backend.load(model, spec_);
        backend.prepare(make_random_inputs(backend.inputs(), spec_.seed + 1000));
        DeviceTimes times;
        backend.infer(times);
        return backend.last_outputs();
    }

    fs::path dir_;
    BenchmarkSpec spec_;
    OnnxRuntimeBackend backend_;  // converts, as the worker does; its constructor initialises ONNX Runtime's API
};

double metric(const ConvertedModel& m, std::string_view name) {
    for (const auto& x : m.metrics)
        if (x.name == name) return x.value;
    return -1;
}

std::span<const float> floats(const HostTensor& t) {
    return {reinterpret_cast<const float*>(t.data.data()), t.data.size() / 4};
}

// The int8 model of each one-op model agrees with float32 on inputs it was not calibrated on: within 5% of
// the largest output (an int8 step is 1/127 of the range, and errors of the input and weight add up) and
// at a cosine of 0.999.
TEST_F(OrtPrecisionTest, Int8OneOpModelsAgreeWithFloat32) {
    for (const GraphBuilder& g : {conv_model(), matmul_model(), gemm_model(), residual_model()}) {
        SCOPED_TRACE(g.graph_name());
        const fs::path model = write(g);
        const ConvertedModel int8 = convert(model, Precision::int8);
        EXPECT_TRUE(int8.skip_reason.empty());
        EXPECT_GE(metric(int8, kInt8CosineMetric), 0.999);
        const auto reference = run(model.string());
        const auto quantized = run(int8.model_path);
        const auto agreement = compare_outputs(quantized, reference);
        ASSERT_EQ(agreement.size(), 1U);
        EXPECT_TRUE(agreement[0].problem.empty()) << agreement[0].problem;
        EXPECT_LE(agreement[0].max_abs_error, 0.05 * agreement[0].reference_max);
        CosineSimilarity cosine;
        cosine.add(floats(quantized[0]), floats(reference[0]));
        EXPECT_GE(cosine.value(), 0.999);
    }
}

// A GPU cell's int8 model keeps its biases float32 (ONNX Runtime's CUDA provider has no int32 DequantizeLinear);
// a CPU cell's has int32 biases; the option decides where given; each is its own cached file, and agrees.
// On a CPU without VNNI as on one with it.
TEST_F(OrtPrecisionTest, BiasesAreInt32OnTheCpuAndFloatForAGpu) {
    const fs::path model = write(conv_model());
    const auto int32_biases = [](const std::string& path) {
        const auto g = models::onnx::read_onnx_file(path).graph;
        return std::count_if(g.nodes.begin(), g.nodes.end(), [&](const auto& n) {
            return n.op_type == "DequantizeLinear" &&
                   std::any_of(g.initializers.begin(), g.initializers.end(), [&](const auto& t) {
                       return t.name == n.inputs[0] && t.data_type == models::onnx::DataType::int32;
                   });
        });
    };
    const ConvertedModel cpu = convert(model, Precision::int8);
    EXPECT_EQ(int32_biases(cpu.model_path), 1);
    spec_.device = Device{DeviceKind::cuda, 0};
    const ConvertedModel gpu = convert(model, Precision::int8);
    spec_.device = Device{};
    EXPECT_NE(gpu.model_path, cpu.model_path);
    EXPECT_EQ(int32_biases(gpu.model_path), 0);
    EXPECT_GE(metric(gpu, kInt8CosineMetric), 0.999);
    // A GPU's int8 weights are full-range; so are these, on any CPU.
    const ConvertedModel forced =
        convert(model, Precision::int8, {{"quantize_bias", "false"}, {"reduce_range", "false"}});
    EXPECT_EQ(forced.model_path, gpu.model_path) << "the same settings give the same cached file";
    const auto agreement = compare_outputs(run(forced.model_path), run(model.string()));
    ASSERT_EQ(agreement.size(), 1U);
    EXPECT_LE(agreement[0].max_abs_error, 0.05 * agreement[0].reference_max);
    EXPECT_THROW(convert(model, Precision::int8, {{"quantize_bias", "maybe"}}), UserError);
}

TEST_F(OrtPrecisionTest, EveryCalibrationMethodAndActivationType) {
    const fs::path model = write(residual_model());
    for (const char* method : {"minmax", "percentile", "entropy"}) {
        for (const char* type : {"int8", "uint8"}) {
            SCOPED_TRACE(std::string(method) + " " + type);
            const ConvertedModel int8 = convert(model, Precision::int8, {{"calibration_method", method}, {"activation_type", type}});
            // Entropy trades the tails of these small uniform activations for resolution, by design.
            EXPECT_GE(metric(int8, kInt8CosineMetric), std::string_view(method) == "entropy" ? 0.97 : 0.99);
        }
    }
}

TEST_F(OrtPrecisionTest, ConvertedModelsAreCachedBySettings) {
    const fs::path model = write(gemm_model());
    const ConvertedModel first = convert(model, Precision::int8);
    const auto written = fs::last_write_time(first.model_path);
    const ConvertedModel again = convert(model, Precision::int8);
    EXPECT_EQ(again.model_path, first.model_path);
    EXPECT_EQ(fs::last_write_time(again.model_path), written) << "reused, not made again";
    EXPECT_DOUBLE_EQ(metric(again, kInt8Top1Metric), metric(first, kInt8Top1Metric)) << "its figures kept beside it";
    EXPECT_GE(metric(first, kInt8Top1Metric), 0.0);
    EXPECT_NE(convert(model, Precision::int8, {{"per_channel", "false"}}).model_path, first.model_path);
    EXPECT_NE(convert(model, Precision::int8, {{"calibration_batches", "2"}}).model_path, first.model_path);
    EXPECT_TRUE(fs::path(first.model_path).string().starts_with((dir_ / "cache" / "converted").string()));
}

// A .npy file: version 1 header, little-endian float32, C order.
void write_npy(const fs::path& path, const std::vector<std::int64_t>& shape, const std::vector<float>& values,
               std::string_view descr = "<f4") {
    std::string dims;
    for (const auto d : shape) dims += std::to_string(d) + ", ";
    std::string header = "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::string bytes = "\x93NUMPY";
    bytes += '\x01';
    bytes += '\x00';
    bytes += static_cast<char>(header.size() & 0xFF);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(values.data()), values.size() * 4);
    std::ofstream(path, std::ios::binary) << bytes;
}

TEST_F(OrtPrecisionTest, CalibratesOnNpyFilesAndNamesTheFileThatDoesNotFit) {
    const fs::path model = write(gemm_model());
    const fs::path data = dir_ / "calibration";
    fs::create_directories(data);
    write_npy(data / "x_0.npy", {4, 32}, weights(4 * 32, 5));
    write_npy(data / "x_1.npy", {4, 32}, weights(4 * 32, 6));
    const ConvertedModel int8 = convert(model, Precision::int8, {{"calibration_data", data.string()}});
    EXPECT_GE(metric(int8, kInt8CosineMetric), 0.99);

    write_npy(data / "x_1.npy", {4, 31}, weights(4 * 31, 6));
    try {
        convert(model, Precision::int8, {{"calibration_data", data.string()}});
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr((data / "x_1.npy").string()));
        EXPECT_THAT(e.what(), HasSubstr("shape [4, 31] does not fit input x"));
    }
    write_npy(data / "x_1.npy", {4, 32}, std::vector<float>(4 * 32 * 2), "<f8");
    try {
        convert(model, Precision::int8, {{"calibration_data", data.string()}});
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr("x_1.npy: holds float64 but input x of gemm.onnx takes float32"));
    }
}

// calibration_data takes what the plan's inputs take (backends/input_files): here an .npz archive of two batches'
// worth of samples, and a misfit in it is named by archive and member.
TEST_F(OrtPrecisionTest, CalibratesOnAnNpzAsInputsTakesIt) {
    const fs::path model = write(gemm_model());
    HostTensor x{{"x", DType::f32, {8, 32}}, {}};
    const std::vector<float> values = weights(8 * 32, 7);
    x.data.resize(values.size() * 4);
    std::memcpy(x.data.data(), values.data(), x.data.size());
    testing::write_npz(dir_ / "calibration.npz", {x});
    const ConvertedModel int8 = convert(model, Precision::int8, {{"calibration_data", (dir_ / "calibration.npz").string()}});
    EXPECT_GE(metric(int8, kInt8CosineMetric), 0.99);

    x.info.shape = {8, 16, 2};
    testing::write_npz(dir_ / "misfit.npz", {x});
    try {
        convert(model, Precision::int8, {{"calibration_data", (dir_ / "misfit.npz").string()}});
        ADD_FAILURE() << "no error";
    } catch (const UserError& e) {
        EXPECT_THAT(e.what(), HasSubstr((dir_ / "misfit.npz").string() + ":x.npy: shape [8, 16, 2] does not fit input x"));
    }
}

// ONNX Runtime's CPU provider on x86 has float16 kernels for data movement but none for Conv, Add, Mul, Relu
// or Softmax's parts (it would run them in float32 between Casts it inserts): models with those are skipped,
// naming the ops; the rest run, their values only rounded to float16.
TEST_F(OrtPrecisionTest, Fp16ModelsRunOnTheCpuWhereOnnxRuntimeHasTheKernelsAndAreSkippedElsewhere) {
    const fs::path model = write(flatten_model());
    for (const char* keep_io : {"false", "true"}) {
        SCOPED_TRACE(keep_io);
        const ConvertedModel fp16 = convert(model, Precision::fp16, {{"keep_io_types", keep_io}});
        ASSERT_EQ(fp16.skip_reason, "");
        const auto reference = run(model.string());
        const auto half = run(fp16.model_path);
        ASSERT_EQ(half.size(), 1U);
        EXPECT_EQ(half[0].info.dtype, std::string_view(keep_io) == "true" ? DType::f32 : DType::f16);
        const auto agreement = compare_outputs(half, reference);
        EXPECT_TRUE(agreement[0].problem.empty()) << agreement[0].problem;
        EXPECT_LE(agreement[0].relative_error(), 1e-3) << "float16 has 11 bits of mantissa";
    }
    const ConvertedModel conv = convert(write(conv_model()), Precision::fp16);
    EXPECT_TRUE(fs::is_regular_file(conv.model_path));
    EXPECT_THAT(conv.skip_reason, HasSubstr("fp16 on the CPU"));
    EXPECT_THAT(conv.skip_reason, HasSubstr("no float16 kernel for Conv of the float16 model of conv.onnx"));
    EXPECT_THAT(convert(write(residual_model()), Precision::fp16).skip_reason, HasSubstr("kernel for Add, Conv of"));
    // ONNX Runtime 1.29's CPU provider has float16 MatMul and Gemm (MLAS), 1.30's npm build had not: either
    // the cell is skipped naming the op, or the float16 model runs and agrees with float32.
    for (const GraphBuilder& g : {matmul_model(), gemm_model()}) {
        const std::string& op = g.nodes()[0].op_type;
        SCOPED_TRACE(op);
        const fs::path file = write(g);
        const ConvertedModel fp16 = convert(file, Precision::fp16);
        if (!fp16.skip_reason.empty()) {
            EXPECT_THAT(fp16.skip_reason, HasSubstr("kernel for " + op));
            continue;
        }
        const auto agreement = compare_outputs(run(fp16.model_path), run(file.string()));
        ASSERT_EQ(agreement.size(), 1U);
        EXPECT_TRUE(agreement[0].problem.empty()) << agreement[0].problem;
        EXPECT_LE(agreement[0].relative_error(), 2e-2) << "float16 products of 32 terms";
    }
    spec_.device = Device{DeviceKind::cuda, 0};
    EXPECT_EQ(convert(write(conv_model()), Precision::fp16).skip_reason, "") << "judged on the CPU only";
}

// The largest |q| of a QDQ model's int8 initializers: its weights' level (the zero points are 0).
int weight_level(const std::string& path) {
    int level = 0;
    for (const auto& t : models::onnx::read_onnx_file(path).graph.initializers)
        if (t.data_type == models::onnx::DataType::int8)
            for (const std::byte b : t.raw)
                level = std::max(level, std::abs(static_cast<int>(static_cast<std::int8_t>(b))));
    return level;
}

// The int8 weights' range follows the CPU that runs the model: reduced to [-64, 64] on x86-64 without VNNI (whose
// int16 pair sums full-range weights saturate; decided so here through the environment, on any CPU), full with
// VNNI and for a GPU; the option overrides; the benchmark's metrics say which and why; each range is its own
// cached file, and a cached file's reason is the run's own.
TEST_F(OrtPrecisionTest, Int8WeightRangeFollowsTheCpuAndIsStoredWithTheFigures) {
    using quantization_metrics::WeightRangeReason;
    const auto reason = [](const ConvertedModel& m) { return metric(m, quantization_metrics::kWeightRangeReason); };
    const auto level = [](const ConvertedModel& m) { return metric(m, quantization_metrics::kWeightMaxLevel); };
    const fs::path model = write(conv_model());
    const ConvertedModel here = convert(model, Precision::int8);
    const int expected = host_cpu_int8_dot() == CpuInt8Dot::saturating ? 64 : 127;
    EXPECT_EQ(level(here), expected);
    EXPECT_EQ(weight_level(here.model_path), expected);
    {
        const testing::ScopedEnv no_vnni(std::string(kAssumeNoVnniVariable), "1");
        const ConvertedModel reduced = convert(model, Precision::int8);
        EXPECT_EQ(level(reduced), 64);
        EXPECT_EQ(reason(reduced), static_cast<double>(WeightRangeReason::cpu_without_vnni));
        EXPECT_EQ(weight_level(reduced.model_path), 64);
        EXPECT_GE(metric(reduced, kInt8CosineMetric), 0.999);
        const ConvertedModel full = convert(model, Precision::int8, {{"reduce_range", "false"}});
        EXPECT_EQ(level(full), 127);
        EXPECT_EQ(reason(full), static_cast<double>(WeightRangeReason::option));
        EXPECT_EQ(weight_level(full.model_path), 127);
        EXPECT_NE(full.model_path, reduced.model_path);
        const ConvertedModel asked = convert(model, Precision::int8, {{"reduce_range", "true"}});
        EXPECT_EQ(asked.model_path, reduced.model_path) << "the same file, from the cache";
        EXPECT_EQ(reason(asked), static_cast<double>(WeightRangeReason::option));
        spec_.device = Device{DeviceKind::cuda, 0};
        const ConvertedModel gpu = convert(model, Precision::int8);
        spec_.device = Device{};
        EXPECT_EQ(level(gpu), 127);
        EXPECT_EQ(reason(gpu), static_cast<double>(WeightRangeReason::gpu));
    }
    EXPECT_EQ(level(convert(model, Precision::int8)), expected) << "the variable read at each conversion";
}

// Zoo classifiers at int8 against float32 on their calibration batches (random weights, random images).
TEST_F(OrtPrecisionTest, ZooClassifiersKeepTheirOutputsAtInt8) {
    for (const char* name : {"resnet50", "mobilenet"}) {
        SCOPED_TRACE(name);
        const fs::path model = dir_ / (std::string(name) + ".onnx");
        std::ofstream(model, std::ios::binary) << models::zoo_model_bytes(name, 1);
        const ConvertedModel int8 = convert(model, Precision::int8);
        EXPECT_GE(metric(int8, kInt8CosineMetric), 0.99);
        EXPECT_GE(metric(int8, kInt8Top1Metric), 0.0);
    }
}

TEST_F(OrtPrecisionTest, RealExportsQuantizeAndConvert) {
    const fs::path exports = INFERBENCH_TEST_EXPORTS_DIR;
    for (const char* name : {"timm_convnext_tiny.onnx", "timm_convnext_tiny.dynamo.onnx", "hf_bert_base.onnx",
                             "hf_bert_base.dynamo.onnx"}) {
        SCOPED_TRACE(name);
        spec_.batch_size = 1;
        const ConvertedModel int8 = convert(exports / name, Precision::int8);
        EXPECT_GE(metric(int8, kInt8CosineMetric), 0.95);
        EXPECT_FALSE(run(int8.model_path).empty());
        const ConvertedModel fp16 = convert(exports / name, Precision::fp16);
        EXPECT_TRUE(fs::is_regular_file(fp16.model_path));
    }
}

}  // namespace
}  // namespace inferbench
