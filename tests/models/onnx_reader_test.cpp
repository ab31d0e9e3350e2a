// The ONNX reader: the zoo's exports read back exactly; hand-made bytes for the wire-format cases
// the zoo does not write (packed fields, typed tensor data, unknown fields); bad input of every
// kind is a UserError with the file name and the byte offset.
#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/scratch_dir.hpp"
#include "core/error.hpp"
#include "models/onnx_reader.hpp"
#include "models/protobuf_writer.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models::onnx {
namespace {

using pb::WireType;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::span<const std::byte> as_bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

OnnxModel read(const std::string& bytes) { return read_onnx(as_bytes(bytes), "test.onnx"); }

// The UserError message reading `bytes` gives, or "(no error)".
std::string read_error(const std::string& bytes) {
    try {
        read(bytes);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

std::int64_t total_elements(const std::vector<OnnxInitializer>& initializers) {
    std::int64_t total = 0;
    for (const auto& init : initializers) total += static_cast<std::int64_t>(init.data.size());
    return total;
}

// What was built is what is read: nodes in order with their wiring, every weight byte for byte.
void expect_same_graph(const GraphBuilder& built, const OnnxModel& m) {
    EXPECT_EQ(m.ir_version, kOnnxIrVersion);
    EXPECT_EQ(m.opset_version(), kOnnxOpsetVersion);
    EXPECT_EQ(m.opset_version("ai.onnx"), kOnnxOpsetVersion);
    EXPECT_EQ(m.producer, kOnnxProducerName);
    EXPECT_EQ(m.graph.name, built.graph_name());

    ASSERT_EQ(m.graph.nodes.size(), built.nodes().size());
    for (std::size_t k = 0; k < built.nodes().size(); ++k) {
        const auto& expected = built.nodes()[k];
        const auto& node = m.graph.nodes[k];
        ASSERT_EQ(node.op_type, expected.op_type) << k;
        EXPECT_EQ(node.name, expected.name);
        EXPECT_EQ(node.inputs, expected.inputs);
        EXPECT_EQ(node.outputs, expected.outputs);
        EXPECT_EQ(node.attributes.size(), expected.attributes.size()) << node.name;
    }

    ASSERT_EQ(m.graph.initializers.size(), built.initializers().size());
    std::int64_t total = 0;
    std::int64_t parameters = 0;
    for (std::size_t k = 0; k < built.initializers().size(); ++k) {
        const auto& expected = built.initializers()[k];
        const auto& tensor = m.graph.initializers[k];
        EXPECT_EQ(tensor.name, expected.name);
        EXPECT_EQ(tensor.data_type, DataType::float32);
        EXPECT_EQ(tensor.dims, expected.dims);
        ASSERT_EQ(tensor.raw.size(), expected.data.size() * sizeof(float)) << tensor.name;
        EXPECT_EQ(std::memcmp(tensor.raw.data(), expected.data.data(), tensor.raw.size()), 0) << tensor.name;
        total += tensor.element_count();
        if (expected.is_parameter) parameters += tensor.element_count();
    }
    EXPECT_EQ(total, total_elements(built.initializers()));
    EXPECT_EQ(parameters, built.parameter_count());
}

std::vector<OnnxDimension> batch_dims(std::vector<std::int64_t> fixed) {
    std::vector<OnnxDimension> dims{std::string(kBatchDimName)};
    for (const std::int64_t d : fixed) dims.emplace_back(d);
    return dims;
}

TEST(OnnxReader, ReadsBackResNet50) {
    const GraphBuilder built = build_zoo_model("resnet50", 7);
    const OnnxModel m = read(built.serialize());
    expect_same_graph(built, m);
    EXPECT_EQ(m.graph.nodes.size(), 53U + 53U + 49U + 16U + 3U + 1U);  // conv, BN, ReLU, Add, pool/flatten, Gemm
    EXPECT_EQ(built.parameter_count(), 25'557'032);

    ASSERT_EQ(m.graph.inputs.size(), 1U);
    EXPECT_EQ(m.graph.inputs[0].name, "input");
    EXPECT_EQ(m.graph.inputs[0].elem_type, DataType::float32);
    EXPECT_TRUE(m.graph.inputs[0].has_shape);
    EXPECT_EQ(m.graph.inputs[0].dims, batch_dims({3, 224, 224}));
    ASSERT_EQ(m.graph.outputs.size(), 1U);
    EXPECT_EQ(m.graph.outputs[0].dims, batch_dims({1000}));

    const OnnxNode& conv1 = m.graph.nodes.front();
    EXPECT_EQ(conv1.op_type, "Conv");
    EXPECT_EQ(std::get<std::vector<std::int64_t>>(conv1.attributes.at("kernel_shape")),
              (std::vector<std::int64_t>{7, 7}));
    EXPECT_EQ(std::get<std::vector<std::int64_t>>(conv1.attributes.at("strides")), (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(std::get<std::int64_t>(conv1.attributes.at("group")), 1);
    EXPECT_EQ(std::get<float>(m.graph.nodes[1].attributes.at("epsilon")), 1e-5F);
    EXPECT_EQ(m.metadata.at("inferbench.zoo_model"), "resnet50");
    EXPECT_EQ(m.metadata.at("inferbench.seed"), "7");
}

TEST(OnnxReader, ReadsBackMobileNetFromItsFile) {
    const testing::ScratchDir dir;
    const auto path = export_onnx("mobilenet", dir.path(), 3);
    const OnnxModel m = read_onnx_file(path);
    const GraphBuilder built = build_zoo_model("mobilenet", 3);
    expect_same_graph(built, m);
    EXPECT_EQ(built.parameter_count(), 4'231'976);
    EXPECT_EQ(m.graph.inputs.at(0).dims, batch_dims({3, 224, 224}));
    EXPECT_EQ(m.graph.outputs.at(0).dims, batch_dims({1000}));
    EXPECT_EQ(m.metadata.at("inferbench.zoo_model"), "mobilenet");
}

// A few-KB network with every layer kind the zoo uses and no metadata, so that the file ends with
// its opset import: then no proper prefix is a complete model.
GraphBuilder tiny_model() {
    GraphBuilder g("tiny", 5);
    const auto batch = OnnxDim::symbolic("batch");
    g.add_input("x", OnnxElemType::float32, {batch, OnnxDim::fixed(3), OnnxDim::fixed(8), OnnxDim::fixed(8)});
    std::string y = g.conv("conv", "x", 3, 8, {.kernel = 3, .pad = 1, .bias = true});
    y = g.relu6("relu", g.batch_norm("bn", y, 8));
    y = g.max_pool("pool", y, 2, 2, 0);
    y = g.gemm("fc", g.flatten("flat", g.global_avg_pool("gap", y)), 8, 10);
    y = g.softmax("prob", y);
    g.add_output(y, OnnxElemType::float32, {batch, OnnxDim::fixed(10)});
    return g;
}

// Test-side wire format: a message as a byte string, fields appended in any order, well-formed or not.
struct Message {
    std::string out;

    Message& key(std::uint32_t field, WireType type) {
        pb::append_varint(out, (std::uint64_t{field} << 3U) | static_cast<std::uint64_t>(type));
        return *this;
    }
    Message& varint(std::uint32_t field, std::uint64_t v) {
        key(field, WireType::varint);
        pb::append_varint(out, v);
        return *this;
    }
    Message& fixed32(std::uint32_t field, std::uint32_t v) {
        key(field, WireType::fixed32);
        pb::append_fixed32(out, v);
        return *this;
    }
    Message& fixed64(std::uint32_t field, std::uint64_t v) {
        key(field, WireType::fixed64);
        pb::append_fixed32(out, static_cast<std::uint32_t>(v));
        pb::append_fixed32(out, static_cast<std::uint32_t>(v >> 32U));
        return *this;
    }
    Message& bytes(std::uint32_t field, std::string_view v) {
        key(field, WireType::length_delimited);
        pb::append_varint(out, v.size());
        out.append(v);
        return *this;
    }
    Message& message(std::uint32_t field, const Message& m) { return bytes(field, m.out); }
    // One unknown field of every wire type, which every reader must skip.
    Message& unknowns() { return varint(900, 12345).fixed32(901, 7).fixed64(902, 9).bytes(903, "skip me"); }
    const std::string& str() const { return out; }
};

Message opset13() { return Message().bytes(1, "").varint(2, 13); }

// ModelProto{ir_version 8, graph, opset 13} around `graph`.
std::string model_around(const Message& graph) {
    return Message().varint(1, 8).message(7, graph).message(8, opset13()).str();
}

std::string packed_varints(std::initializer_list<std::uint64_t> values) {
    std::string out;
    for (const auto v : values) pb::append_varint(out, v);
    return out;
}

TEST(OnnxReader, PackedAndUnpackedRepeatedFieldsReadTheSame) {
    // AttributeProto{name=1, floats=7, ints=8, type=20}; no type on the unpacked one: inferred.
    Message packed_ints = Message().bytes(1, "pads").bytes(8, packed_varints({1, 2, 300})).varint(20, 7);
    Message unpacked_ints = Message().bytes(1, "strides").varint(8, 1).varint(8, 2).varint(8, 300);
    std::string floats_le;
    pb::append_floats_le(floats_le, std::vector<float>{0.5F, -2.0F});
    Message packed_floats = Message().bytes(1, "scales").bytes(7, floats_le).varint(20, 6);
    Message unpacked_floats = Message()
                                  .bytes(1, "alphas")
                                  .fixed32(7, std::bit_cast<std::uint32_t>(0.5F))
                                  .fixed32(7, std::bit_cast<std::uint32_t>(-2.0F));
    Message node = Message().bytes(4, "Op").message(5, packed_ints).message(5, unpacked_ints);
    node.message(5, packed_floats).message(5, unpacked_floats);
    const OnnxModel m = read(model_around(Message().message(1, node)));

    const auto& attrs = m.graph.nodes.at(0).attributes;
    EXPECT_THAT(std::get<std::vector<std::int64_t>>(attrs.at("pads")), ElementsAre(1, 2, 300));
    EXPECT_THAT(std::get<std::vector<std::int64_t>>(attrs.at("strides")), ElementsAre(1, 2, 300));
    EXPECT_THAT(std::get<std::vector<float>>(attrs.at("scales")), ElementsAre(0.5F, -2.0F));
    EXPECT_THAT(std::get<std::vector<float>>(attrs.at("alphas")), ElementsAre(0.5F, -2.0F));
}

std::vector<std::byte> le_bytes(std::initializer_list<unsigned> values) {
    std::vector<std::byte> out;
    for (const unsigned v : values) out.push_back(static_cast<std::byte>(v));
    return out;
}

TEST(OnnxReader, TypedTensorDataBecomesLittleEndianRaw) {
    // TensorProto{dims=1, data_type=2, float_data=4, int32_data=5, int64_data=7, name=8, double_data=10,
    // uint64_data=11}
    std::string floats_le;
    pb::append_floats_le(floats_le, std::vector<float>{1.0F, -2.0F});
    const Message f32 = Message().bytes(1, packed_varints({2})).varint(2, 1).bytes(4, floats_le).bytes(8, "f");
    // Negative int32/int64 values are 10-byte sign-extended varints.
    const Message i8 = Message().varint(1, 2).varint(2, 3).varint(5, ~std::uint64_t{0}).varint(5, 2).bytes(8, "i8");
    const Message i64 = Message().varint(2, 7).varint(7, ~std::uint64_t{0} - 1).bytes(8, "i64");  // scalar
    const Message f64 =
        Message().varint(1, 1).varint(2, 11).fixed64(10, std::bit_cast<std::uint64_t>(0.25)).bytes(8, "d");
    const Message u32 = Message().varint(1, 1).varint(2, 12).varint(11, 0x01020304).bytes(8, "u");
    const Message f16 = Message().varint(1, 1).varint(2, 10).varint(5, 0x3C00).bytes(8, "h");
    Message graph;
    for (const Message* t : {&f32, &i8, &i64, &f64, &u32, &f16}) graph.message(5, *t);
    const OnnxModel m = read(model_around(graph));

    const auto& inits = m.graph.initializers;
    ASSERT_EQ(inits.size(), 6U);
    EXPECT_EQ(inits[0].raw, le_bytes({0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0}));
    EXPECT_THAT(inits[0].dims, ElementsAre(2));
    EXPECT_EQ(inits[1].raw, le_bytes({0xFF, 0x02}));
    EXPECT_EQ(inits[1].data_type, DataType::int8);
    EXPECT_EQ(inits[2].raw, le_bytes({0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}));
    EXPECT_TRUE(inits[2].dims.empty());
    EXPECT_EQ(inits[2].element_count(), 1);
    EXPECT_EQ(inits[3].raw, le_bytes({0, 0, 0, 0, 0, 0, 0xD0, 0x3F}));
    EXPECT_EQ(inits[4].raw, le_bytes({0x04, 0x03, 0x02, 0x01}));
    EXPECT_EQ(inits[5].raw, le_bytes({0x00, 0x3C}));
}

TEST(OnnxReader, SkipsUnknownFieldsEverywhere) {
    Message dim_value = Message().unknowns().varint(1, 4);
    Message dim_param = Message().bytes(2, "n").unknowns();
    Message dim_unknown = Message().unknowns();
    Message shape = Message().message(1, dim_param).unknowns().message(1, dim_value).message(1, dim_unknown);
    Message tensor_type = Message().varint(1, 1).unknowns().message(2, shape);
    Message type = Message().unknowns().message(1, tensor_type);
    Message input = Message().bytes(1, "x").message(2, type).unknowns();
    Message attr = Message().unknowns().bytes(1, "axis").varint(3, 1).varint(20, 2);
    Message node = Message().bytes(1, "x").unknowns().bytes(2, "y").bytes(4, "Relu").bytes(7, "").message(5, attr);
    Message tensor = Message().varint(2, 1).unknowns().bytes(8, "w").bytes(9, std::string(4, '\0'));
    Message graph = Message().unknowns().message(1, node).message(5, tensor).message(11, input).unknowns();
    Message opset = Message().unknowns().bytes(1, "").varint(2, 17);
    const std::string bytes = Message().unknowns().varint(1, 9).message(7, graph).unknowns().message(8, opset).str();
    const OnnxModel m = read(bytes);

    EXPECT_EQ(m.ir_version, 9);
    EXPECT_EQ(m.opset_version(), 17);
    ASSERT_EQ(m.graph.nodes.size(), 1U);
    EXPECT_EQ(m.graph.nodes[0].op_type, "Relu");
    EXPECT_EQ(std::get<std::int64_t>(m.graph.nodes[0].attributes.at("axis")), 1);
    ASSERT_EQ(m.graph.initializers.size(), 1U);
    EXPECT_EQ(m.graph.initializers[0].raw.size(), 4U);
    ASSERT_EQ(m.graph.inputs.size(), 1U);
    EXPECT_EQ(m.graph.inputs[0].dims, (std::vector<OnnxDimension>{std::string("n"), std::int64_t{4}, std::string()}));
}

// AttributeProto{name=1, g=6, type=20 (GRAPH = 5)}.
Message graph_attribute(std::string_view name, const Message& graph) {
    return Message().bytes(1, name).message(6, graph).varint(20, 5);
}

TEST(OnnxReader, ControlFlowBranchesAreReadAsSubgraphs) {
    const Message then_node = Message().bytes(2, "a").bytes(4, "Constant");
    const Message then_graph = Message().message(1, then_node).bytes(2, "then").message(12, Message().bytes(1, "a"));
    const Message else_graph = Message().message(1, Message().bytes(1, "x").bytes(2, "b").bytes(4, "Identity"));
    Message node = Message().bytes(1, "cond").bytes(2, "y").bytes(4, "If");
    node.message(5, graph_attribute("then_branch", then_graph)).message(5, graph_attribute("else_branch", else_graph));
    const OnnxModel m = read(model_around(Message().message(1, node)));

    const auto& subgraphs = m.graph.nodes.at(0).subgraphs;
    ASSERT_EQ(subgraphs.size(), 2U);
    EXPECT_EQ(subgraphs.at("then_branch")->name, "then");
    ASSERT_EQ(subgraphs.at("then_branch")->nodes.size(), 1U);
    EXPECT_EQ(subgraphs.at("then_branch")->nodes[0].op_type, "Constant");
    EXPECT_EQ(subgraphs.at("then_branch")->outputs.at(0).name, "a");
    EXPECT_EQ(subgraphs.at("else_branch")->nodes.at(0).inputs, (std::vector<std::string>{"x"}));
    EXPECT_TRUE(m.graph.nodes.at(0).attributes.empty());
}

TEST(OnnxReader, GraphsNestedTooDeepAreAUserError) {
    Message graph = Message().message(1, Message().bytes(4, "Relu"));
    for (int depth = 0; depth < 40; ++depth)
        graph = Message().message(1, Message().bytes(4, "If").message(5, graph_attribute("then_branch", graph)));
    EXPECT_THAT(read_error(model_around(graph)), HasSubstr("graphs nested deeper than 32"));
}

TEST(OnnxReader, EmptyAndNonOnnxFilesAreUserErrors) {
    EXPECT_EQ(read_error(""), "test.onnx: not an ONNX model: empty file at byte 0");
    EXPECT_THAT(read_error("hello, world\n"), HasSubstr("test.onnx: not an ONNX model: "));
    EXPECT_THAT(read_error("{\"json\": true}"), HasSubstr("not an ONNX model"));
    // Valid protobuf, but not a model: no ir_version, graph or opset.
    EXPECT_EQ(read_error(Message().varint(5, 1).str()),
              "test.onnx: not an ONNX model: no IR version (ModelProto.ir_version) at byte 2");
    EXPECT_THAT(read_error(Message().varint(1, 8).str()), HasSubstr("no graph"));
    EXPECT_THAT(read_error(Message().varint(1, 8).message(7, Message()).str()), HasSubstr("no operator set import"));

    const testing::ScratchDir dir;
    dir.write("empty.onnx", "");
    EXPECT_THROW(read_onnx_file(dir.path() / "empty.onnx"), UserError);
    EXPECT_THAT([&] { read_onnx_file(dir.path() / "missing.onnx"); },
                ::testing::ThrowsMessage<UserError>(HasSubstr("missing.onnx: No such file")));
    EXPECT_THROW(read_onnx_file(dir.path()), UserError);
}

TEST(OnnxReader, MalformedWireFormatNamesWhatAndWhere) {
    std::string huge_varint = "\x08";
    huge_varint.append(10, '\xFF');
    huge_varint.push_back('\x01');
    EXPECT_EQ(read_error(huge_varint), "test.onnx: not an ONNX model: varint longer than 64 bits at byte 1");
    std::string long_length = "\x3A";  // field 7, length-delimited
    pb::append_varint(long_length, 1ULL << 40U);
    EXPECT_THAT(read_error(long_length),
                HasSubstr("length 1099511627776 runs past the end of the data (0 bytes left) at byte 1"));
    EXPECT_THAT(read_error(Message().fixed32(1, 8).str()),
                HasSubstr("field 1 has wire type 5 (32-bit), expected 0 (varint) at byte 0"));
    EXPECT_THAT(read_error("\x0B"), HasSubstr("field 1 is a group (wire type 3)"));
    EXPECT_THAT(read_error("\x0F"), HasSubstr("field 1: invalid wire type 7"));
    EXPECT_THAT(read_error(std::string(1, '\0')), HasSubstr("invalid field number 0"));
    EXPECT_THAT(read_error("\x4D\x01\x02"), HasSubstr("32-bit value runs past the end"));

    // Offsets count from the start of the file, also inside nested messages: the tensor below
    // starts after the model's 2-byte ir_version, the graph's 2-byte key+length and its own 2.
    const Message bad_tensor = Message().varint(2, 1).bytes(9, "abc").bytes(8, "w");
    EXPECT_EQ(read_error(model_around(Message().message(5, bad_tensor))),
              "test.onnx: not an ONNX model: tensor 'w': 3 bytes of data for 1 float32 elements at byte 6");
    const Message negative_dim = Message().varint(1, ~std::uint64_t{0}).varint(2, 1).bytes(8, "n");
    EXPECT_THAT(read_error(model_around(Message().message(5, negative_dim))), HasSubstr("invalid dims [-1]"));
}

// A model with one float32 initializer 'w' of `count` elements whose data lies in `location`.
std::string model_with_external_weight(const std::string& location, std::int64_t count,
                                       const std::vector<std::pair<std::string, std::string>>& extra = {}) {
    Message tensor = Message().varint(1, static_cast<std::uint64_t>(count)).varint(2, 1).bytes(8, "w");
    tensor.message(13, Message().bytes(1, "location").bytes(2, location));
    for (const auto& [key, value] : extra) tensor.message(13, Message().bytes(1, key).bytes(2, value));
    tensor.varint(14, 1);
    return model_around(Message().message(5, tensor));
}

// The UserError message reading the file gives, or "(no error)".
std::string read_file_error(const std::filesystem::path& path) {
    try {
        read_onnx_file(path);
    } catch (const UserError& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(OnnxReader, ExternalDataIsReadFromTheModelsFolder) {
    const testing::ScratchDir dir;
    const float values[] = {1.5F, -2.0F, 3.25F, 4.0F, 5.0F, 6.0F};
    std::string data(8, 'x');  // an offset: the weights start at byte 8
    data.append(reinterpret_cast<const char*>(values), sizeof(values));
    dir.write("weights.bin", data);
    std::ofstream(dir.path() / "m.onnx", std::ios::binary)
        << model_with_external_weight("weights.bin", 6, {{"offset", "8"}, {"length", "24"}});
    const OnnxModel m = read_onnx_file(dir.path() / "m.onnx");
    ASSERT_EQ(m.graph.initializers.size(), 1U);
    const OnnxTensor& w = m.graph.initializers[0];
    EXPECT_FALSE(w.external);
    ASSERT_EQ(w.raw.size(), sizeof(values));
    EXPECT_EQ(std::memcmp(w.raw.data(), values, sizeof(values)), 0);
    // Without a length, the tensor's own size is read.
    std::ofstream(dir.path() / "n.onnx", std::ios::binary)
        << model_with_external_weight("weights.bin", 2, {{"offset", "8"}});
    EXPECT_EQ(read_onnx_file(dir.path() / "n.onnx").graph.initializers[0].raw.size(), 8U);
}

TEST(OnnxReader, ExternalDataThatCannotBeTrustedIsAClearError) {
    const testing::ScratchDir dir;
    std::filesystem::create_directories(dir.path() / "model");
    dir.write("outside.bin", std::string(64, 'o'));
    dir.write("model/short.bin", std::string(8, 's'));
    std::filesystem::create_symlink(dir.path() / "outside.bin", dir.path() / "model" / "link.bin");
    std::filesystem::create_directories(dir.path() / "model" / "folder.bin");
    const auto error = [&](const std::string& location, std::int64_t count,
                           const std::vector<std::pair<std::string, std::string>>& extra = {}) {
        const auto path = dir.path() / "model" / "m.onnx";
        std::ofstream(path, std::ios::binary | std::ios::trunc) << model_with_external_weight(location, count, extra);
        return read_file_error(path);
    };
    EXPECT_THAT(error("../outside.bin", 4), HasSubstr("tensor 'w': external data '../outside.bin': leads out"));
    EXPECT_THAT(error((dir.path() / "outside.bin").string(), 4), HasSubstr("an absolute path"));
    EXPECT_THAT(error("link.bin", 4), HasSubstr("leads out of the model's folder"));
    EXPECT_THAT(error("missing.bin", 4), HasSubstr("cannot open"));
    EXPECT_THAT(error("folder.bin", 4), HasSubstr("is not a regular file"));
    EXPECT_THAT(error("short.bin", 4), HasSubstr("lie beyond the end of the file (8 bytes)"));
    EXPECT_THAT(error("short.bin", 1, {{"offset", "6"}}), HasSubstr("beyond the end"));
    EXPECT_THAT(error("short.bin", 1, {{"length", "8"}}), HasSubstr("8 bytes stored for 1 float32 elements (4 bytes)"));
    EXPECT_THAT(error("short.bin", 1, {{"offset", "-3"}}), HasSubstr("external data offset '-3' is not a byte count"));
    EXPECT_THAT(error("short.bin", 1, {{"length", "1e3"}}), HasSubstr("is not a byte count"));
    for (const auto& message : {error("../outside.bin", 4), error("missing.bin", 4)})
        EXPECT_THAT(message, AllOf(HasSubstr("m.onnx"), Not(HasSubstr("not an ONNX model"))));
}

TEST(OnnxReader, ExternalDataFromMemoryAndSparseInitializersAreClearErrors) {
    EXPECT_THAT(read_error(model_with_external_weight("weights.bin", 4)),
                AllOf(HasSubstr("test.onnx: tensor 'w' keeps its data in an external file ('weights.bin'); read the "
                                "model from its file"),
                      Not(HasSubstr("not an ONNX model"))));
    const Message no_location = Message().varint(1, 4).varint(2, 1).bytes(8, "w").varint(14, 1);
    EXPECT_THAT(read_error(model_around(Message().message(5, no_location))), HasSubstr("external data without a location"));
    EXPECT_THAT(read_error(model_around(Message().message(15, Message()))), HasSubstr("sparse initializers"));
}

// PyTorch 2.11's dynamo exporter, as a user calls it, writes the weights to MODEL.onnx.data; the same
// model (same seed) from the TorchScript-based exporter keeps them inside. Both read in full.
TEST(OnnxReader, ReadsPyTorchsExternalDataExport) {
    const std::filesystem::path exports = INFERBENCH_TEST_EXPORTS_DIR;
    const OnnxModel external = read_onnx_file(exports / "hf_bert_base.dynamo.onnx");
    const OnnxModel inside = read_onnx_file(exports / "hf_bert_base.onnx");
    std::int64_t external_bytes = 0;
    std::int64_t weight_count = 0;
    for (const auto& tensor : external.graph.initializers) {
        EXPECT_FALSE(tensor.external) << tensor.name;
        external_bytes += static_cast<std::int64_t>(tensor.raw.size());
        weight_count += tensor.element_count();
    }
    EXPECT_GE(external_bytes, static_cast<std::int64_t>(std::filesystem::file_size(exports / "hf_bert_base.dynamo.onnx.data")));
    // The word embedding table is the same bytes in both files (the exporters name it alike).
    const auto find = [](const OnnxModel& m, std::int64_t rows) -> const OnnxTensor* {
        for (const auto& t : m.graph.initializers)
            if (t.dims.size() == 2 && t.dims[0] == rows && t.data_type == DataType::float32) return &t;
        return nullptr;
    };
    const OnnxTensor* a = find(external, 1000);
    const OnnxTensor* b = find(inside, 1000);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(a->raw.size(), b->raw.size());
    EXPECT_EQ(std::memcmp(a->raw.data(), b->raw.data(), a->raw.size()), 0);
    EXPECT_GT(weight_count, 100'000);
}

TEST(OnnxReader, EveryTruncationIsAUserError) {
    const std::string bytes = tiny_model().serialize();
    ASSERT_NO_THROW(read(bytes));
    for (std::size_t size = 0; size < bytes.size(); ++size) {
        EXPECT_THAT(read_error(bytes.substr(0, size)), HasSubstr("not an ONNX model")) << "truncated to " << size;
    }
    // A real export too, every 997th byte: the cut lands inside the graph, at every depth.
    const std::string mobilenet = build_zoo_model("mobilenet", 1).serialize();
    for (std::size_t size = 0; size < mobilenet.size(); size += 997) {
        ASSERT_THROW(read_onnx(as_bytes(mobilenet).first(size), "m.onnx"), UserError) << size;
    }
}

// Corruption anywhere in a model either still decodes or is a UserError; nothing else escapes.
TEST(OnnxReader, FlippedBytesNeverCrash) {
    const std::string bytes = tiny_model().serialize();
    for (std::size_t at = 0; at < bytes.size(); ++at) {
        for (const char value : {'\x00', '\x7F', '\x80', '\xFF'}) {
            std::string corrupt = bytes;
            corrupt[at] = value;
            try {
                read(corrupt);
            } catch (const UserError&) {
            }
        }
    }
}

TEST(OnnxReader, RandomBytesAreUserErrors) {
    std::mt19937_64 rng(20240501);
    for (int k = 0; k < 500; ++k) {
        std::string bytes(static_cast<std::size_t>(rng() % 4096), '\0');
        for (char& c : bytes) c = static_cast<char>(rng() & 0xFFU);
        EXPECT_THROW(read(bytes), UserError) << "buffer " << k;
    }
}

void expect_same_infos(const std::vector<OnnxValueInfo>& a, const std::vector<OnnxValueInfo>& b) {
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        EXPECT_EQ(a[i].name, b[i].name);
        EXPECT_EQ(a[i].elem_type, b[i].elem_type);
        EXPECT_EQ(a[i].has_shape, b[i].has_shape);
        EXPECT_EQ(a[i].dims, b[i].dims);
    }
}

TEST(OnnxSignature, MatchesTheFullReadOfResNet50) {
    const testing::ScratchDir dir;
    const auto path = export_onnx("resnet50", dir.path(), 7);
    const OnnxGraphSignature signature = read_onnx_signature(path);
    const OnnxModel model = read_onnx_file(path);
    expect_same_infos(signature.inputs, model.graph.inputs);
    expect_same_infos(signature.outputs, model.graph.outputs);
    EXPECT_EQ(signature.inputs.at(0).dims, batch_dims({3, 224, 224}));
}

// ValueInfoProto{name, tensor float [batch, 3]}.
Message value_info(const std::string& name) {
    const Message shape = Message().message(1, Message().bytes(2, "batch")).message(1, Message().varint(1, 3));
    return Message().bytes(1, name).message(2, Message().message(1, Message().varint(1, 1).message(2, shape)));
}

// A model whose 2 GiB weight (a hole in a sparse file) lies before its inputs: reading the signature
// must skip it without loading it, and leave out the weight also listed as an input.
TEST(OnnxSignature, SkipsHugeInitializersWithoutReadingThem) {
    const testing::ScratchDir dir;
    constexpr std::uint64_t kWeightBytes = std::uint64_t{1} << 31;
    std::string tensor_head = Message().bytes(8, "w").str() + "\x4a";
    pb::append_varint(tensor_head, kWeightBytes);
    std::string graph_head = "\x2a";
    pb::append_varint(graph_head, tensor_head.size() + kWeightBytes);
    graph_head += tensor_head;
    const std::string graph_tail =
        Message().message(11, value_info("x")).message(11, value_info("w")).message(12, value_info("y")).str();
    std::string head = Message().varint(1, 8).str() + "\x3a";
    pb::append_varint(head, graph_head.size() + kWeightBytes + graph_tail.size());
    head += graph_head;
    {
        std::ofstream out(dir.file("huge.onnx"), std::ios::binary);
        out << head;
        out.seekp(static_cast<std::streamoff>(head.size() + kWeightBytes));
        out << graph_tail << Message().message(8, opset13()).str();
    }
    rusage before{};
    getrusage(RUSAGE_SELF, &before);
    const OnnxGraphSignature signature = read_onnx_signature(std::filesystem::path(dir.file("huge.onnx")));
    rusage after{};
    getrusage(RUSAGE_SELF, &after);
    EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 100 * 1024) << "KiB more at the peak: the weight was read";
    ASSERT_EQ(signature.inputs.size(), 1U);
    EXPECT_EQ(signature.inputs[0].name, "x");
    EXPECT_EQ(signature.inputs[0].dims, (std::vector<OnnxDimension>{std::string("batch"), std::int64_t{3}}));
    ASSERT_EQ(signature.outputs.size(), 1U);
    EXPECT_EQ(signature.outputs[0].name, "y");
}

TEST(OnnxSignature, BadFilesAreUserErrors) {
    const testing::ScratchDir dir;
    dir.write("empty.onnx", "");
    EXPECT_THROW(read_onnx_signature(std::filesystem::path(dir.file("empty.onnx"))), UserError);
    EXPECT_THROW(read_onnx_signature(std::filesystem::path(dir.file("absent.onnx"))), UserError);
    const std::string model = model_around(Message().message(11, value_info("x")));
    EXPECT_EQ(read_onnx_signature(as_bytes(model), "m.onnx").inputs.size(), 1U);
    EXPECT_THROW(read_onnx_signature(as_bytes(model.substr(0, model.size() / 2)), "m.onnx"), UserError);
}

}  // namespace
}  // namespace inferbench::models::onnx
