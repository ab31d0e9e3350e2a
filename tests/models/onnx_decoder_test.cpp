#include "models/onnx_decoder.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "../common/scratch_dir.hpp"
#include "../common/user_error.hpp"
#include "core/error.hpp"
#include "models/decoder_models.hpp"
#include "models/decoder_weights.hpp"
#include "models/onnx_fp16.hpp"
#include "models/onnx_reader.hpp"
#include "models/zoo.hpp"
#include "zoo_graph_checks.hpp"

namespace inferbench::models {
namespace {

using inferbench::testing::ScratchDir;
using inferbench::testing::user_error;

const DecoderShape& shape_of(std::string_view name) { return find_decoder_model(name)->shape; }

std::vector<std::string> names(const std::vector<OnnxValueInfo>& infos) {
    std::vector<std::string> out;
    for (const auto& info : infos) out.push_back(info.name);
    return out;
}

TEST(OnnxDecoder, TinyGraphHasOptimumsInterface) {
    const DecoderShape& s = shape_of("llama-tiny");
    const GraphBuilder g = build_llama_onnx(s, 42, Precision::fp32);
    testing::expect_well_formed(g);
    std::vector<std::string> inputs{"input_ids", "attention_mask", "position_ids"};
    std::vector<std::string> outputs{"logits"};
    for (int i = 0; i < 4; ++i) {
        for (const char* part : {"key", "value"}) {
            inputs.push_back(fmt::format("past_key_values.{}.{}", i, part));
            outputs.push_back(fmt::format("present.{}.{}", i, part));
        }
    }
    EXPECT_EQ(names(g.inputs()), inputs);
    EXPECT_EQ(names(g.outputs()), outputs);
    EXPECT_EQ(g.inputs()[3].dims[1].value, s.kv_heads);
    EXPECT_EQ(g.inputs()[3].dims[2].param, "past_sequence_length");
    EXPECT_EQ(g.outputs()[1].dims[2].param, "total_sequence_length");
    EXPECT_EQ(g.outputs()[0].dims[2].value, s.vocab);
    EXPECT_EQ(g.parameter_count(), parameter_count(s));
    // Standard ops only: the LibTorch interpreter runs the same file.
    for (const auto& node : g.nodes()) EXPECT_NE(node.op_type, "Cos") << node.name;
    EXPECT_EQ(g.opset_version(), kDecoderOpsetVersion);
}

TEST(OnnxDecoder, WeightsAreDecoderWeights) {
    const DecoderShape& s = shape_of("llama-tiny");
    const GraphBuilder g = build_llama_onnx(s, 7, Precision::fp32);
    const DecoderTensor tensor = decoder_tensors(s)[2];  // layer 0's q_proj
    std::vector<float> expected(static_cast<std::size_t>(tensor.element_count()));
    fill_decoder_tensor(tensor, 7, expected);
    const OnnxInitializer& init = testing::initializer(g, tensor.name);
    ASSERT_EQ(init.dims, tensor.shape);
    std::vector<float> made(expected.size());
    init.fill(made);
    EXPECT_EQ(made, expected);
}

TEST(OnnxDecoder, PublishedParameterCounts) {
    // From the shape alone, rounded as the model cards publish them.
    EXPECT_EQ(std::llround(static_cast<double>(parameter_count(shape_of("llama-3.2-1b"))) / 1e7), 124);
    EXPECT_EQ(std::llround(static_cast<double>(parameter_count(shape_of("llama-3.1-8b"))) / 1e7), 803);
    // The graph holds exactly those weights (made only when written: building it allocates none).
    EXPECT_EQ(build_llama_onnx(shape_of("llama-3.1-8b"), 1, Precision::fp16).parameter_count(),
              parameter_count(shape_of("llama-3.1-8b")));
}

TEST(OnnxDecoder, WrittenFileReadsBackItsShape) {
    ScratchDir dir;
    const auto path = dir.path() / "tiny.onnx";
    const DecoderShape& s = shape_of("llama-tiny");
    write_llama_onnx(s, 42, Precision::fp32, path);
    EXPECT_EQ(decoder_shape_from_onnx(path), s);
    EXPECT_EQ(decoder_weight_bytes_from_onnx(path), parameter_count(s) * 4);
    EXPECT_FALSE(std::filesystem::exists(dir.path() / onnx_decoder_data_name(path)));  // 16 MB: inline
    const onnx::OnnxModel model = onnx::read_onnx_file(path);
    const auto it =
        std::ranges::find(model.graph.initializers, "model.layers.3.mlp.down_proj.weight", &onnx::OnnxTensor::name);
    ASSERT_NE(it, model.graph.initializers.end());
    EXPECT_EQ(it->data_type, onnx::DataType::float32);
    EXPECT_EQ(it->raw.size(), static_cast<std::size_t>(s.hidden * s.intermediate * 4));
    EXPECT_TRUE(is_decoder_model(path.string()));
}

TEST(OnnxDecoder, Fp16WritesHalves) {
    ScratchDir dir;
    const auto path = dir.path() / "tiny16.onnx";
    const DecoderShape& s = shape_of("llama-tiny");
    write_llama_onnx(s, 42, Precision::fp16, path);
    const onnx::OnnxModel model = onnx::read_onnx_file(path);
    const DecoderTensor tensor = decoder_tensors(s)[0];
    std::vector<float> expected(static_cast<std::size_t>(tensor.element_count()));
    fill_decoder_tensor(tensor, 42, expected);
    const auto it = std::ranges::find(model.graph.initializers, tensor.name, &onnx::OnnxTensor::name);
    ASSERT_NE(it, model.graph.initializers.end());
    ASSERT_EQ(it->data_type, onnx::DataType::float16);
    ASSERT_EQ(it->raw.size(), expected.size() * 2);
    for (std::size_t i = 0; i < 100; ++i) {
        const auto bits = static_cast<std::uint16_t>(std::to_integer<unsigned>(it->raw[2 * i]) |
                                                     (std::to_integer<unsigned>(it->raw[2 * i + 1]) << 8U));
        EXPECT_EQ(bits, onnx::to_fp16_clamped(expected[i]));
    }
    for (const auto& input : model.graph.inputs) {
        if (input.name.starts_with("past_key_values.")) {
            EXPECT_EQ(input.elem_type, onnx::DataType::float16);
        }
    }
}

TEST(OnnxDecoder, ExternalDataHoldsLargeTensors) {
    // The writer's path for models over 2 GB, on a small graph: tensors at aligned offsets in the data file.
    GraphBuilder g("external", 1);
    g.add_input("x", OnnxElemType::float32, {OnnxDim::fixed(300)});
    g.add_initializer({.name = "small", .dims = {2}, .data = {1.0F, 2.0F}, .is_parameter = false});
    g.add_initializer({.name = "w",
                       .dims = {300},
                       .data = {},
                       .is_parameter = true,
                       .elem_type = OnnxElemType::float16,
                       .fill = [](std::span<float> out) { std::ranges::fill(out, 0.5F); }});
    g.add_initializer({.name = "v", .dims = {400}, .data = std::vector<float>(400, 3.0F)});
    g.add_node({"Add", "a", {"x", "w"}, {"a"}, {}});
    g.add_node({"Add", "y", {"a", "v"}, {"y"}, {}});
    g.add_output("y", OnnxElemType::float32, {OnnxDim::fixed(300)});
    ScratchDir dir;
    {
        std::ofstream data(dir.path() / "m.onnx.data", std::ios::binary);
        std::ofstream model(dir.path() / "m.onnx", std::ios::binary);
        const OnnxExternalData external{.out = &data, .location = "m.onnx.data", .threshold_bytes = 512};
        g.write(model, &external);
    }
    EXPECT_EQ(std::filesystem::file_size(dir.path() / "m.onnx.data"), 640U + 1600U);  // 600 B, padded to 640
    const onnx::OnnxModel model = onnx::read_onnx_file(dir.path() / "m.onnx");
    const auto& inits = model.graph.initializers;
    ASSERT_EQ(inits.size(), 3U);
    EXPECT_EQ(inits[0].raw.size(), 8U);
    EXPECT_EQ(inits[1].raw.size(), 600U);
    EXPECT_EQ(std::to_integer<unsigned>(inits[1].raw[1]), 0x38U);  // 0.5 as a half: 0x3800
    float v = 0.0F;
    std::memcpy(&v, inits[2].raw.data() + 396, sizeof v);
    EXPECT_EQ(v, 3.0F);
}

TEST(OnnxDecoder, ForeignOrTruncatedFilesAreOneClearError) {
    ScratchDir dir;
    const auto tiny = dir.path() / "tiny.onnx";
    write_llama_onnx(shape_of("llama-tiny"), 42, Precision::fp32, tiny);
    std::string bytes;
    {
        std::ifstream in(tiny, std::ios::binary);
        bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    dir.write("cut.onnx", bytes.substr(0, bytes.size() / 2));
    EXPECT_NE(user_error([&] { decoder_shape_from_onnx(dir.path() / "cut.onnx"); }).find("cut.onnx: not an ONNX model"),
              std::string::npos);

    std::ofstream(dir.path() / "resnet.onnx", std::ios::binary) << zoo_model_bytes("mobilenet", 1);
    const std::string no_past = user_error([&] { decoder_shape_from_onnx(dir.path() / "resnet.onnx"); });
    EXPECT_NE(no_past.find("resnet.onnx: not an ONNX decoder with a KV cache"), std::string::npos) << no_past;

    // Past inputs, but weights without Hugging Face names.
    GraphBuilder anonymous("anonymous", 1);
    anonymous.add_input("past_key_values.0.key", OnnxElemType::float32,
                        {OnnxDim::symbolic("b"), OnnxDim::fixed(2), OnnxDim::symbolic("p"), OnnxDim::fixed(8)});
    anonymous.add_initializer({"onnx::MatMul_1", {4, 4}, std::vector<float>(16, 0.0F)});
    anonymous.add_node({"Identity", "y", {"past_key_values.0.key"}, {"y"}, {}});
    anonymous.add_output("y", OnnxElemType::float32, {});
    dir.write("anonymous.onnx", anonymous.serialize());
    const std::string unnamed = user_error([&] { decoder_shape_from_onnx(dir.path() / "anonymous.onnx"); });
    EXPECT_NE(unnamed.find("cannot read the decoder's shape: it lacks a weight named *embed_tokens.weight"),
              std::string::npos)
        << unnamed;
}

TEST(OnnxDecoder, ExportShapeFromWeightNames) {
    // A user's export without our metadata: the shape comes from the past inputs and the weights.
    DecoderShape s = shape_of("llama-tiny");
    GraphBuilder g = build_llama_onnx(s, 3, Precision::fp32);
    GraphBuilder stripped("export", 3);
    for (const auto& in : g.inputs()) stripped.add_input(in.name, in.elem_type, in.dims);
    for (const auto& init : g.initializers()) {
        if (init.is_parameter) stripped.add_initializer(init);
    }
    stripped.add_node({"Identity", "y", {"input_ids"}, {"y"}, {}});
    stripped.add_output("y", OnnxElemType::int64, {});
    ScratchDir dir;
    std::ofstream(dir.path() / "export.onnx", std::ios::binary) << stripped.serialize();
    const DecoderShape read = decoder_shape_from_onnx(dir.path() / "export.onnx");
    s.max_context = kMaxGenerationTokens;  // what the file does not say
    s.rope_theta = DecoderShape{}.rope_theta;
    s.rms_eps = DecoderShape{}.rms_eps;
    EXPECT_EQ(read, s);
}

TEST(OnnxDecoder, RefusesOtherPrecisions) {
    EXPECT_NE(user_error([] { build_llama_onnx(shape_of("llama-tiny"), 1, Precision::int8); }).find("fp32 or fp16"),
              std::string::npos);
}

}  // namespace
}  // namespace inferbench::models
