// Decodes what GraphBuilder writes with an independent, minimal protobuf reader and checks it
// against onnx.proto's field numbers, then checks the zoo graphs' structure.
#include <bit>
#include <cstdint>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "models/onnx_builder.hpp"
#include "models/zoo.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {
namespace {

struct Field {
    std::uint32_t number = 0;
    std::uint32_t wire_type = 0;
    std::uint64_t value = 0;   // varint and fixed32
    std::string_view payload;  // length-delimited
};

std::uint64_t read_varint(std::string_view data, std::size_t& pos) {
    std::uint64_t value = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        if (pos >= data.size()) throw std::runtime_error("truncated varint");
        const auto byte = static_cast<unsigned char>(data[pos++]);
        value |= std::uint64_t{byte & 0x7FU} << shift;
        if ((byte & 0x80U) == 0) return value;
    }
    throw std::runtime_error("varint too long");
}

// A whole message's fields, in order. Throws on anything malformed or unexpected.
std::vector<Field> parse(std::string_view data) {
    std::vector<Field> fields;
    std::size_t pos = 0;
    while (pos < data.size()) {
        const std::uint64_t tag = read_varint(data, pos);
        Field f{static_cast<std::uint32_t>(tag >> 3U), static_cast<std::uint32_t>(tag & 7U), 0, {}};
        if (f.wire_type == 0) {
            f.value = read_varint(data, pos);
        } else if (f.wire_type == 2) {
            const auto length = static_cast<std::size_t>(read_varint(data, pos));
            if (length > data.size() - pos) throw std::runtime_error("length past end of message");
            f.payload = data.substr(pos, length);
            pos += length;
        } else if (f.wire_type == 5) {
            if (data.size() - pos < 4) throw std::runtime_error("truncated fixed32");
            std::uint32_t v = 0;
            std::memcpy(&v, data.data() + pos, 4);  // this test assumes a little-endian host
            f.value = v;
            pos += 4;
        } else {
            throw std::runtime_error("unexpected wire type");
        }
        fields.push_back(f);
    }
    return fields;
}

std::vector<Field> all(std::string_view message, std::uint32_t number) {
    std::vector<Field> out;
    for (const Field& f : parse(message)) {
        if (f.number == number) out.push_back(f);
    }
    return out;
}

Field one(std::string_view message, std::uint32_t number) {
    const auto found = all(message, number);
    if (found.size() != 1) throw std::runtime_error("expected exactly one field " + std::to_string(number));
    return found.front();
}

std::string str(std::string_view message, std::uint32_t number) {
    return std::string(one(message, number).payload);
}
std::int64_t i64(std::string_view message, std::uint32_t number) {
    return static_cast<std::int64_t>(one(message, number).value);
}

// "batch,3,224,224" from a ValueInfoProto.
std::string shape_of(std::string_view value_info) {
    const auto tensor_type = one(one(value_info, 2).payload, 1).payload;
    EXPECT_EQ(i64(tensor_type, 1), 1);  // FLOAT
    std::string out;
    for (const Field& dim : all(one(tensor_type, 2).payload, 1)) {
        if (!out.empty()) out += ",";
        const auto param = all(dim.payload, 2);
        out += param.empty() ? std::to_string(i64(dim.payload, 1)) : std::string(param.front().payload);
    }
    return out;
}

GraphBuilder tiny_graph() {
    GraphBuilder g("tiny", 5);
    g.add_input("x", OnnxElemType::float32, {OnnxDim::symbolic("batch"), OnnxDim::fixed(4)});
    g.relu("act", g.gemm("fc", "x", 4, 2));
    g.add_output("act", OnnxElemType::float32, {OnnxDim::symbolic("batch"), OnnxDim::fixed(2)});
    g.set_producer_version("test");
    g.add_metadata("k", "v");
    return g;
}

TEST(OnnxBuilder, ModelHeaderAndOpset) {
    const std::string bytes = tiny_graph().serialize();
    EXPECT_EQ(i64(bytes, 1), 8);  // ir_version
    EXPECT_EQ(str(bytes, 2), "inferbench");
    EXPECT_EQ(str(bytes, 3), "test");
    const auto opset = one(bytes, 8).payload;
    EXPECT_EQ(str(opset, 1), "");
    EXPECT_EQ(i64(opset, 2), 13);
    const auto entry = one(bytes, 14).payload;
    EXPECT_EQ(str(entry, 1), "k");
    EXPECT_EQ(str(entry, 2), "v");
}

TEST(OnnxBuilder, GraphNodesInitializersAndValueInfos) {
    const GraphBuilder g = tiny_graph();
    const std::string bytes = g.serialize();
    const auto graph = one(bytes, 7).payload;
    EXPECT_EQ(str(graph, 2), "tiny");

    const auto nodes = all(graph, 1);
    ASSERT_EQ(nodes.size(), 2U);
    EXPECT_EQ(str(nodes[0].payload, 4), "Gemm");
    EXPECT_EQ(str(nodes[0].payload, 3), "fc");
    const auto gemm_inputs = all(nodes[0].payload, 1);
    ASSERT_EQ(gemm_inputs.size(), 3U);
    EXPECT_EQ(gemm_inputs[1].payload, "fc.weight");
    EXPECT_EQ(str(nodes[0].payload, 2), "fc");
    EXPECT_EQ(str(nodes[1].payload, 4), "Relu");

    const auto inits = all(graph, 5);
    ASSERT_EQ(inits.size(), 2U);
    const auto weight = inits[0].payload;
    EXPECT_EQ(str(weight, 8), "fc.weight");
    EXPECT_EQ(i64(weight, 2), 1);  // FLOAT
    const auto dims = all(weight, 1);
    ASSERT_EQ(dims.size(), 2U);
    EXPECT_EQ(dims[0].value, 2U);
    EXPECT_EQ(dims[1].value, 4U);
    const auto raw = one(weight, 9).payload;
    ASSERT_EQ(raw.size(), 8 * sizeof(float));
    const auto& expected = g.initializers()[0].data;
    EXPECT_EQ(std::memcmp(raw.data(), expected.data(), raw.size()), 0);

    EXPECT_EQ(str(one(graph, 11).payload, 1), "x");
    EXPECT_EQ(shape_of(one(graph, 11).payload), "batch,4");
    EXPECT_EQ(str(one(graph, 12).payload, 1), "act");
    EXPECT_EQ(shape_of(one(graph, 12).payload), "batch,2");
}

TEST(OnnxBuilder, AttributesOfEveryKind) {
    GraphBuilder g("attrs", 0);
    g.add_node({"Custom",
                "n",
                {"a"},
                {"b"},
                {OnnxAttribute::of_float("f", 0.5F), OnnxAttribute::of_int("i", -3),
                 OnnxAttribute::of_string("s", "text"), OnnxAttribute::of_floats("fs", {1.0F, 2.0F}),
                 OnnxAttribute::of_ints("is", {4, -5})}});
    const std::string bytes = g.serialize();
    const auto attrs = all(one(one(bytes, 7).payload, 1).payload, 5);
    ASSERT_EQ(attrs.size(), 5U);
    std::map<std::string, std::string_view> by_name;
    for (const Field& a : attrs) by_name[str(a.payload, 1)] = a.payload;

    EXPECT_EQ(i64(by_name["f"], 20), 1);
    EXPECT_EQ(std::bit_cast<float>(static_cast<std::uint32_t>(one(by_name["f"], 2).value)), 0.5F);
    EXPECT_EQ(i64(by_name["i"], 20), 2);
    EXPECT_EQ(i64(by_name["i"], 3), -3);
    EXPECT_EQ(i64(by_name["s"], 20), 3);
    EXPECT_EQ(str(by_name["s"], 4), "text");
    EXPECT_EQ(i64(by_name["fs"], 20), 6);
    EXPECT_EQ(all(by_name["fs"], 7).size(), 2U);
    EXPECT_EQ(i64(by_name["is"], 20), 7);
    const auto ints = all(by_name["is"], 8);
    ASSERT_EQ(ints.size(), 2U);
    EXPECT_EQ(static_cast<std::int64_t>(ints[1].value), -5);
}

TEST(OnnxBuilder, RejectsDuplicateAndMisshapenInitializers) {
    GraphBuilder g("bad", 0);
    g.add_initializer({"w", {2}, {1.0F, 2.0F}, true});
    EXPECT_THROW(g.add_initializer({"w", {2}, {1.0F, 2.0F}, true}), std::logic_error);
    EXPECT_THROW(g.add_initializer({"v", {3}, {1.0F, 2.0F}, true}), std::logic_error);
    EXPECT_THROW(g.conv("c", "x", 3, 8, {.kernel = 3, .group = 2}), std::logic_error);
}

TEST(OnnxBuilder, Relu6SharesItsClipBounds) {
    GraphBuilder g("clip", 0);
    g.add_input("x", OnnxElemType::float32, {OnnxDim::fixed(1)});
    g.relu6("b", g.relu6("a", "x"));
    EXPECT_EQ(g.initializers().size(), 2U);
    EXPECT_EQ(g.parameter_count(), 0);
    EXPECT_EQ(g.nodes()[1].inputs, (std::vector<std::string>{"a", "const.0", "const.6"}));
}

struct GraphSummary {
    std::map<std::string, int> op_counts;
    std::string input_shape;
    std::string output_name;
    std::string output_shape;
    std::int64_t parameter_elements = 0;  // initializers other than BN statistics and constants
};

// Decodes a serialized model, checking on the way that it is well formed: nodes in topological
// order, each value produced once, every raw_data as long as its dims say.
GraphSummary summarize(const std::string& bytes) {
    GraphSummary s;
    const auto graph = one(bytes, 7).payload;
    std::set<std::string, std::less<>> defined;
    for (const Field& in : all(graph, 11)) {
        defined.insert(str(in.payload, 1));
        s.input_shape = shape_of(in.payload);
    }
    for (const Field& init : all(graph, 5)) {
        std::int64_t elements = 1;
        for (const Field& d : all(init.payload, 1)) elements *= static_cast<std::int64_t>(d.value);
        EXPECT_EQ(one(init.payload, 9).payload.size(), static_cast<std::size_t>(elements) * 4);
        const std::string name = str(init.payload, 8);
        EXPECT_TRUE(defined.insert(name).second) << name;
        const bool statistic = name.ends_with(".running_mean") || name.ends_with(".running_var");
        if (!statistic && !name.starts_with("const.")) s.parameter_elements += elements;
    }
    for (const Field& node : all(graph, 1)) {
        for (const Field& in : all(node.payload, 1)) EXPECT_TRUE(defined.contains(in.payload)) << in.payload;
        for (const Field& out : all(node.payload, 2))
            EXPECT_TRUE(defined.insert(std::string(out.payload)).second);
        ++s.op_counts[str(node.payload, 4)];
    }
    const auto output = one(graph, 12).payload;
    s.output_name = str(output, 1);
    s.output_shape = shape_of(output);
    EXPECT_TRUE(defined.contains(s.output_name));
    return s;
}

TEST(ZooGraphs, ResNet50Structure) {
    const GraphSummary s = summarize(build_resnet50(0).serialize());
    EXPECT_EQ(s.input_shape, "batch,3,224,224");
    EXPECT_EQ(s.output_name, "logits");
    EXPECT_EQ(s.output_shape, "batch,1000");
    EXPECT_EQ(s.parameter_elements, 25'557'032);
    const std::map<std::string, int> expected = {
        {"Conv", 53},   {"BatchNormalization", 53}, {"Relu", 49},   {"Add", 16},
        {"MaxPool", 1}, {"GlobalAveragePool", 1},   {"Flatten", 1}, {"Gemm", 1}};
    EXPECT_EQ(s.op_counts, expected);
}

TEST(ZooGraphs, MobileNetStructure) {
    const GraphSummary s = summarize(build_mobilenet(0).serialize());
    EXPECT_EQ(s.input_shape, "batch,3,224,224");
    EXPECT_EQ(s.output_name, "probabilities");
    EXPECT_EQ(s.output_shape, "batch,1000");
    EXPECT_EQ(s.parameter_elements, 4'231'976);
    const std::map<std::string, int> expected = {{"Conv", 27},   {"BatchNormalization", 27},
                                                 {"Clip", 27},   {"GlobalAveragePool", 1},
                                                 {"Flatten", 1}, {"Gemm", 1},
                                                 {"Softmax", 1}};
    EXPECT_EQ(s.op_counts, expected);
}

}  // namespace
}  // namespace inferbench::models
