// The float16 conversion: rounding and clamping, the structure of converted graphs (blocked ops keep float32
// between Casts, initializer bytes halved, I/O types as asked), faithful copying of what it does not
// convert, and real exports (external data, TorchScript and dynamo graphs) that read back as float16 models.
#include "models/onnx_fp16.hpp"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "models/onnx_reader.hpp"
#include "models/onnx_wire.hpp"
#include "transform_models.hpp"

namespace inferbench::models::onnx {
namespace {

namespace fs = std::filesystem;
using testing::small_cnn;

class Fp16Test : public ::testing::Test {
protected:
    Fp16Test() : dir_(fs::temp_directory_path() / ("inferbench-fp16-" + std::to_string(std::random_device{}()))) {
        fs::create_directories(dir_);
    }
    ~Fp16Test() override {
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    OnnxModel convert(const fs::path& model, const Fp16Options& options = {}) {
        const std::string bytes = convert_to_fp16(model, options);
        return read_onnx(wire::as_bytes(bytes), "converted");
    }
    fs::path dir_;
};

const OnnxNode* producer(const OnnxGraph& g, const std::string& value) {
    for (const auto& n : g.nodes)
        if (std::find(n.outputs.begin(), n.outputs.end(), value) != n.outputs.end()) return &n;
    return nullptr;
}

std::int64_t cast_to(const OnnxNode& n) { return std::get<std::int64_t>(n.attributes.at("to")); }

TEST(Fp16Rounding, RoundsToNearestEvenAndClampsToTheFiniteRange) {
    EXPECT_EQ(to_fp16_clamped(1.0F), 0x3C00);
    EXPECT_EQ(to_fp16_clamped(-2.0F), 0xC000);
    EXPECT_EQ(to_fp16_clamped(65504.0F), 0x7BFF);
    EXPECT_EQ(to_fp16_clamped(1e6F), 0x7BFF) << "beyond float16: its largest finite value, not infinity";
    EXPECT_EQ(to_fp16_clamped(-std::numeric_limits<float>::infinity()), 0xFBFF);
    EXPECT_EQ(to_fp16_clamped(1e-12F), 0x0001) << "tiny non-zero values keep their sign and stay non-zero";
    EXPECT_EQ(to_fp16_clamped(-1e-12F), 0x8001);
    EXPECT_EQ(to_fp16_clamped(0.0F), 0x0000);
    EXPECT_EQ(to_fp16_clamped(std::nanf("")), 0x7E00);
    EXPECT_EQ(to_fp16_clamped(1.0F + 1.0F / 2048.0F), 0x3C00) << "a tie rounds to the even mantissa";
    EXPECT_EQ(to_fp16_clamped(1.0F + 3.0F / 2048.0F), 0x3C02);
    for (const float v : {0.1F, -3.14159F, 1000.5F, 6.2e-5F, 3e-7F})
        EXPECT_NEAR(from_fp16(to_fp16_clamped(v)), v, std::fabs(v) * 1e-3F + 6e-8F) << v;
}

TEST_F(Fp16Test, ConvertsWeightsAndIoAndKeepsBlockedOpsInFloat32BetweenCasts) {
    const fs::path path = testing::write_model(small_cnn(), dir_ / "cnn.onnx");
    const OnnxModel original = read_onnx_file(path);
    const OnnxModel converted = convert(path);
    const OnnxGraph& g = converted.graph;
    EXPECT_EQ(g.inputs[0].elem_type, DataType::float16);
    EXPECT_EQ(g.outputs[0].elem_type, DataType::float16);
    for (const auto& t : original.graph.initializers) {
        const auto it = std::find_if(g.initializers.begin(), g.initializers.end(),
                                     [&](const OnnxTensor& c) { return c.name == t.name; });
        ASSERT_NE(it, g.initializers.end()) << t.name;
        if (t.name == "floor") {
            EXPECT_EQ(it->data_type, DataType::float32) << "read by the blocked Max only: kept float32";
            continue;
        }
        EXPECT_EQ(it->data_type, DataType::float16) << t.name;
        EXPECT_EQ(it->raw.size() * 2, t.raw.size()) << t.name;
        EXPECT_EQ(it->dims, t.dims);
    }
    const auto max = std::find_if(g.nodes.begin(), g.nodes.end(), [](const OnnxNode& n) { return n.op_type == "Max"; });
    ASSERT_NE(max, g.nodes.end());
    const OnnxNode* in_cast = producer(g, max->inputs[0]);
    ASSERT_NE(in_cast, nullptr);
    EXPECT_EQ(in_cast->op_type, "Cast");
    EXPECT_EQ(cast_to(*in_cast), static_cast<std::int64_t>(DataType::float32));
    EXPECT_EQ(in_cast->inputs[0], "relu");
    EXPECT_EQ(max->inputs[1], "floor") << "a float32 initializer needs no Cast";
    const auto out_cast = std::find_if(g.nodes.begin(), g.nodes.end(), [&](const OnnxNode& n) {
        return n.op_type == "Cast" && n.inputs[0] == max->outputs[0];
    });
    ASSERT_NE(out_cast, g.nodes.end());
    EXPECT_EQ(cast_to(*out_cast), static_cast<std::int64_t>(DataType::float16));
    EXPECT_EQ(out_cast->outputs[0], "max") << "the consumers still read the name they read before";
    EXPECT_EQ(g.nodes.size(), original.graph.nodes.size() + 2);
    std::set<std::string> names;
    for (const auto& n : g.nodes)
        EXPECT_TRUE(n.name.empty() || names.insert(n.name).second) << n.name << ": ONNX Runtime refuses two nodes of one name";
}

TEST_F(Fp16Test, KeepIoTypesCastsAtTheGraphBoundary) {
    const fs::path path = testing::write_model(small_cnn(), dir_ / "cnn.onnx");
    Fp16Options options;
    options.keep_io_types = true;
    const OnnxGraph g = convert(path, options).graph;
    EXPECT_EQ(g.inputs[0].elem_type, DataType::float32);
    EXPECT_EQ(g.outputs[0].elem_type, DataType::float32);
    EXPECT_EQ(g.nodes.front().op_type, "Cast");
    EXPECT_EQ(g.nodes.front().inputs[0], "images");
    EXPECT_EQ(cast_to(g.nodes.front()), static_cast<std::int64_t>(DataType::float16));
    const OnnxNode* last = producer(g, "logits");
    ASSERT_NE(last, nullptr);
    EXPECT_EQ(last->op_type, "Cast");
    EXPECT_EQ(cast_to(*last), static_cast<std::int64_t>(DataType::float32));
    const OnnxNode* gemm = producer(g, last->inputs[0]);
    ASSERT_NE(gemm, nullptr);
    EXPECT_EQ(gemm->op_type, "Gemm");
    const auto conv = std::find_if(g.nodes.begin(), g.nodes.end(), [](const OnnxNode& n) { return n.op_type == "Conv"; });
    EXPECT_EQ(conv->inputs[0], g.nodes.front().outputs[0]);
}

TEST(Bf16Rounding, RoundsToNearestEvenKeepingFloat32Range) {
    EXPECT_EQ(to_bf16(1.0F), 0x3F80);
    EXPECT_EQ(to_bf16(-2.0F), 0xC000);
    EXPECT_EQ(to_bf16(1e30F), 0x714A) << "bfloat16 has float32's exponent: no clamping to a small range";
    EXPECT_EQ(to_bf16(1.0F + 1.0F / 256.0F), 0x3F80) << "a tie rounds to the even mantissa";
    EXPECT_EQ(to_bf16(1.0F + 3.0F / 256.0F), 0x3F82);
    EXPECT_EQ(to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
    EXPECT_TRUE(std::isnan(from_bf16(to_bf16(std::nanf("")))));
    for (const float v : {0.1F, -3.14159F, 1000.5F, 6.2e-5F, 3e-20F})
        EXPECT_NEAR(from_bf16(to_bf16(v)), v, std::fabs(v) * 4e-3F) << v;
}

TEST_F(Fp16Test, Bfloat16ConversionFollowsTheSameRules) {
    const fs::path path = testing::write_model(small_cnn(), dir_ / "cnn.onnx");
    const OnnxModel original = read_onnx_file(path);
    Fp16Options options;
    options.low_type = DataType::bfloat16;
    options.keep_io_types = true;
    const OnnxGraph g = convert(path, options).graph;
    EXPECT_EQ(g.inputs[0].elem_type, DataType::float32);
    EXPECT_EQ(cast_to(g.nodes.front()), static_cast<std::int64_t>(DataType::bfloat16));
    for (const auto& t : original.graph.initializers) {
        const auto it = std::find_if(g.initializers.begin(), g.initializers.end(),
                                     [&](const OnnxTensor& c) { return c.name == t.name; });
        ASSERT_NE(it, g.initializers.end()) << t.name;
        EXPECT_EQ(it->data_type, t.name == "floor" ? DataType::float32 : DataType::bfloat16) << t.name;
        if (it->data_type != DataType::bfloat16) continue;
        ASSERT_EQ(it->raw.size() * 2, t.raw.size());
        float first = 0;
        std::memcpy(&first, t.raw.data(), 4);
        const auto bits = static_cast<std::uint16_t>(std::to_integer<unsigned>(it->raw[0]) |
                                                     (std::to_integer<unsigned>(it->raw[1]) << 8U));
        EXPECT_EQ(bits, to_bf16(first)) << t.name;
    }
    for (const auto& n : g.nodes) {
        if (n.op_type != "Cast") continue;
        EXPECT_NE(cast_to(n), static_cast<std::int64_t>(DataType::float16));
    }
    options.low_type = DataType::int8;
    EXPECT_THROW(convert_to_fp16(path, options), std::invalid_argument);
}

TEST_F(Fp16Test, CopiesWhatItDoesNotConvertByteForByte) {
    GraphBuilder builder = small_cnn();
    builder.set_doc_string("kept as written");
    builder.add_metadata("origin", "test");
    std::string bytes = builder.serialize();
    // A field no ONNX version defines (number 99, varint 12345): a newer writer's, which must survive.
    pb::ProtoWriter unknown;
    unknown.write_varint(99, 12345);
    bytes += unknown.bytes();
    const fs::path path = dir_ / "cnn.onnx";
    std::ofstream(path, std::ios::binary) << bytes;
    const std::string converted = convert_to_fp16(path, {});
    EXPECT_NE(converted.find(unknown.bytes()), std::string::npos);
    const OnnxModel model = read_onnx(wire::as_bytes(converted), "converted");
    EXPECT_EQ(model.doc_string, "kept as written");
    EXPECT_EQ(model.metadata.at("origin"), "test");
    EXPECT_EQ(model.producer, "inferbench");
}

// Every float32 tensor of a converted export is float16, but those only blocked ops read; nothing refers
// to an external file any more; and the node count grew by the Casts alone.
void expect_float16_model(const fs::path& export_path, const OnnxModel& converted) {
    const OnnxModel original = read_onnx_file(export_path);
    const auto casts = [](const OnnxGraph& g) {
        return static_cast<std::size_t>(
            std::count_if(g.nodes.begin(), g.nodes.end(), [](const OnnxNode& n) { return n.op_type == "Cast"; }));
    };
    const std::size_t casts_added = casts(converted.graph) - casts(original.graph);
    EXPECT_EQ(converted.graph.nodes.size(), original.graph.nodes.size() + casts_added) << export_path;
    const auto blocked = Fp16Options::default_fp16_block_list();
    for (const auto& t : converted.graph.initializers) {
        EXPECT_FALSE(t.external.has_value()) << t.name;
        if (t.data_type != DataType::float32) continue;
        for (const auto& n : converted.graph.nodes) {
            for (std::size_t i = 0; i < n.inputs.size(); ++i) {
                if (n.inputs[i] != t.name) continue;
                EXPECT_TRUE(blocked.contains(n.op_type) || (n.op_type == "Resize" && i == 2))
                    << export_path << ": float32 " << t.name << " read by " << n.op_type;
            }
        }
    }
    for (const auto& v : converted.graph.inputs)
        EXPECT_NE(v.elem_type, DataType::float32) << export_path << " input " << v.name;
    for (const auto& v : converted.graph.outputs)
        EXPECT_NE(v.elem_type, DataType::float32) << export_path << " output " << v.name;
}

TEST_F(Fp16Test, ConvertsRealExportsOfBothExportersWithExternalData) {
    const fs::path exports = INFERBENCH_TEST_EXPORTS_DIR;
    for (const char* name : {"timm_convnext_tiny.onnx", "timm_convnext_tiny.dynamo.onnx", "hf_bert_base.onnx",
                             "hf_bert_base.dynamo.onnx", "hf_gpt2.dynamo.onnx", "hf_t5_encoder.onnx"}) {
        SCOPED_TRACE(name);
        const std::string bytes = convert_to_fp16(exports / name, {});
        // Written elsewhere, where the external data file is not: it must not be needed.
        const fs::path moved = dir_ / name;
        std::ofstream(moved, std::ios::binary) << bytes;
        expect_float16_model(exports / name, read_onnx_file(moved));
    }
}

}  // namespace
}  // namespace inferbench::models::onnx
