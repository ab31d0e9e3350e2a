// GraphBuilder's bookkeeping and the ModelProto encoding. The layer helpers are in onnx_layers.cpp.
#include "models/onnx_builder.hpp"

#include <algorithm>
#include <bit>
#include <ostream>
#include <stdexcept>
#include <streambuf>
#include <string>

#include <fmt/format.h>

#include "models/onnx_fp16.hpp"
#include "models/protobuf_writer.hpp"

namespace inferbench::models {

namespace {

using pb::ProtoWriter;

// Field numbers, from onnx/onnx.proto.
struct ModelField {
    static constexpr std::uint32_t ir_version = 1, producer_name = 2, producer_version = 3, doc_string = 6,
                                   graph = 7, opset_import = 8, metadata_props = 14;
};
struct GraphField {
    static constexpr std::uint32_t node = 1, name = 2, initializer = 5, input = 11, output = 12;
};
struct NodeField {
    static constexpr std::uint32_t input = 1, output = 2, name = 3, op_type = 4, attribute = 5;
};
struct AttributeField {
    static constexpr std::uint32_t name = 1, f = 2, i = 3, s = 4, floats = 7, ints = 8, type = 20;
};
struct TensorField {
    static constexpr std::uint32_t dims = 1, data_type = 2, name = 8, raw_data = 9, external_data = 13,
                                   data_location = 14;
};
constexpr std::int32_t kDataLocationExternal = 1;  // TensorProto.DataLocation EXTERNAL
constexpr std::size_t kExternalAlignment = 64;
// ValueInfoProto, TypeProto, TypeProto.Tensor, TensorShapeProto(.Dimension), OperatorSetIdProto,
// StringStringEntryProto: small enough to name inline.
constexpr std::uint32_t kValueInfoName = 1, kValueInfoType = 2, kTypeTensorType = 1, kTensorElemType = 1,
                        kTensorShape = 2, kShapeDim = 1, kDimValue = 1, kDimParam = 2, kOpsetDomain = 1,
                        kOpsetVersion = 2, kEntryKey = 1, kEntryValue = 2;

ProtoWriter encode_attribute(const OnnxAttribute& a) {
    ProtoWriter w;
    w.write_string(AttributeField::name, a.name);
    switch (a.type) {
        case OnnxAttribute::Type::float_value:
            w.write_float(AttributeField::f, a.f);
            break;
        case OnnxAttribute::Type::int_value:
            w.write_int64(AttributeField::i, a.i);
            break;
        case OnnxAttribute::Type::string_value:
            w.write_bytes(AttributeField::s, a.s);
            break;
        case OnnxAttribute::Type::floats:
            for (const float v : a.floats) w.write_float(AttributeField::floats, v);
            break;
        case OnnxAttribute::Type::ints:
            for (const std::int64_t v : a.ints) w.write_int64(AttributeField::ints, v);
            break;
    }
    w.write_int32(AttributeField::type, static_cast<std::int32_t>(a.type));
    return w;
}

ProtoWriter encode_node(const OnnxNode& node) {
    ProtoWriter w;
    for (const auto& in : node.inputs) w.write_string(NodeField::input, in);
    for (const auto& out : node.outputs) w.write_string(NodeField::output, out);
    w.write_string(NodeField::name, node.name);
    w.write_string(NodeField::op_type, node.op_type);
    for (const auto& a : node.attributes) w.write_message(NodeField::attribute, encode_attribute(a));
    return w;
}

ProtoWriter encode_value_info(const OnnxValueInfo& info) {
    ProtoWriter shape;
    for (const auto& d : info.dims) {
        ProtoWriter dim;
        if (d.param.empty()) {
            dim.write_int64(kDimValue, d.value);
        } else {
            dim.write_string(kDimParam, d.param);
        }
        shape.write_message(kShapeDim, dim);
    }
    ProtoWriter tensor_type;
    tensor_type.write_int32(kTensorElemType, static_cast<std::int32_t>(info.elem_type));
    tensor_type.write_message(kTensorShape, shape);
    ProtoWriter type;
    type.write_message(kTypeTensorType, tensor_type);
    ProtoWriter w;
    w.write_string(kValueInfoName, info.name);
    w.write_message(kValueInfoType, type);
    return w;
}

std::size_t raw_size(const OnnxInitializer& init) {
    const std::size_t element_bytes = init.elem_type == OnnxElemType::float16 ? 2 : sizeof(float);
    return static_cast<std::size_t>(init.element_count()) * element_bytes;
}

// Where a tensor's data lives in the external file; absent: inline, as raw_data.
struct ExternalPlace {
    std::size_t offset = 0;
    bool external = false;
};

ProtoWriter external_entry(std::string_view key, const std::string& value) {
    ProtoWriter entry;
    entry.write_string(kEntryKey, key);
    entry.write_string(kEntryValue, value);
    return entry;
}

// A TensorProto without its raw_data, which write() streams straight from the initializer; for an
// external tensor, where its data lies instead.
ProtoWriter encode_tensor_header(const OnnxInitializer& init, const OnnxExternalData* external, ExternalPlace place) {
    ProtoWriter w;
    for (const std::int64_t d : init.dims) w.write_int64(TensorField::dims, d);
    w.write_int32(TensorField::data_type, static_cast<std::int32_t>(init.elem_type));
    w.write_string(TensorField::name, init.name);
    if (place.external) {
        w.write_message(TensorField::external_data, external_entry("location", external->location));
        w.write_message(TensorField::external_data, external_entry("offset", std::to_string(place.offset)));
        w.write_message(TensorField::external_data, external_entry("length", std::to_string(raw_size(init))));
        w.write_int32(TensorField::data_location, kDataLocationExternal);
    }
    return w;
}

// The encoded size of the whole TensorProto, raw_data included where the data is inline.
std::size_t tensor_size(const ProtoWriter& header, const OnnxInitializer& init, ExternalPlace place) {
    if (place.external) return header.size();
    const std::size_t raw = raw_size(init);
    return header.size() + pb::varint_size(TensorField::raw_data << 3U) + pb::varint_size(raw) + raw;
}

std::size_t field_size(std::uint32_t field, std::size_t payload) {
    return pb::varint_size(std::uint64_t{field} << 3U) + pb::varint_size(payload) + payload;
}

void write_bytes(std::ostream& out, const std::string& bytes) {
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

void write_floats_le(std::ostream& out, std::span<const float> data) {
    if constexpr (std::endian::native == std::endian::little) {
        out.write(reinterpret_cast<const char*>(data.data()),
                  static_cast<std::streamsize>(data.size() * sizeof(float)));
    } else {
        std::string chunk;
        pb::append_floats_le(chunk, std::vector<float>(data.begin(), data.end()));
        write_bytes(out, chunk);
    }
}

void write_halves_le(std::ostream& out, std::span<const float> data) {
    constexpr std::size_t kChunk = 1 << 16;
    std::string chunk;
    for (std::size_t start = 0; start < data.size(); start += kChunk) {
        chunk.clear();
        for (const float v : data.subspan(start, std::min(kChunk, data.size() - start))) {
            const std::uint16_t bits = onnx::to_fp16_clamped(v);
            chunk.push_back(static_cast<char>(bits & 0xFFU));
            chunk.push_back(static_cast<char>(bits >> 8U));
        }
        write_bytes(out, chunk);
    }
}

// The initializer's values in its element type: made now where it has a `fill`, then dropped.
void write_tensor_data(std::ostream& out, const OnnxInitializer& init) {
    std::vector<float> made;
    std::span<const float> values = init.data;
    if (init.fill) {
        made.resize(static_cast<std::size_t>(init.element_count()));
        init.fill(made);
        values = made;
    }
    if (init.elem_type == OnnxElemType::float16) write_halves_le(out, values);
    else write_floats_le(out, values);
}

void write_padding(std::ostream& out, std::size_t count) {
    const std::string zeros(count, '\0');
    write_bytes(out, zeros);
}

// A GraphProto encoded in field order, except the tensor data, which write_graph() streams from
// the initializers: the length prefix is known without a copy of ~100 MB of weights.
struct EncodedGraph {
    ProtoWriter nodes_and_name;               // fields 1 and 2
    std::vector<ProtoWriter> tensor_headers;  // field 5, each without its raw_data
    std::vector<ExternalPlace> places;        // per initializer
    ProtoWriter inputs_and_outputs;           // fields 11 and 12
    std::size_t size = 0;                     // of the whole GraphProto
};

EncodedGraph encode_graph(const GraphBuilder& g, const OnnxExternalData* external) {
    EncodedGraph e;
    for (const auto& node : g.nodes()) e.nodes_and_name.write_message(GraphField::node, encode_node(node));
    e.nodes_and_name.write_string(GraphField::name, g.graph_name());
    e.size = e.nodes_and_name.size();
    std::size_t external_end = 0;
    for (const auto& init : g.initializers()) {
        ExternalPlace place;
        if (external != nullptr && raw_size(init) >= external->threshold_bytes) {
            place = {(external_end + kExternalAlignment - 1) / kExternalAlignment * kExternalAlignment, true};
            external_end = place.offset + raw_size(init);
        }
        e.places.push_back(place);
        e.tensor_headers.push_back(encode_tensor_header(init, external, place));
        e.size += field_size(GraphField::initializer, tensor_size(e.tensor_headers.back(), init, place));
    }
    for (const auto& in : g.inputs())
        e.inputs_and_outputs.write_message(GraphField::input, encode_value_info(in));
    for (const auto& o : g.outputs())
        e.inputs_and_outputs.write_message(GraphField::output, encode_value_info(o));
    e.size += e.inputs_and_outputs.size();
    return e;
}

void write_graph(std::ostream& out, const EncodedGraph& e, const std::vector<OnnxInitializer>& initializers,
                 const OnnxExternalData* external) {
    write_bytes(out, e.nodes_and_name.bytes());
    std::size_t external_end = 0;
    for (std::size_t k = 0; k < initializers.size(); ++k) {
        const ExternalPlace place = e.places[k];
        ProtoWriter prefix;
        prefix.write_length_header(GraphField::initializer, tensor_size(e.tensor_headers[k], initializers[k], place));
        write_bytes(out, prefix.bytes());
        write_bytes(out, e.tensor_headers[k].bytes());
        if (place.external) {
            write_padding(*external->out, place.offset - external_end);
            write_tensor_data(*external->out, initializers[k]);
            external_end = place.offset + raw_size(initializers[k]);
            continue;
        }
        ProtoWriter raw_prefix;
        raw_prefix.write_length_header(TensorField::raw_data, raw_size(initializers[k]));
        write_bytes(out, raw_prefix.bytes());
        write_tensor_data(out, initializers[k]);
    }
    write_bytes(out, e.inputs_and_outputs.bytes());
}

}  // namespace

OnnxAttribute OnnxAttribute::of_float(std::string name, float v) {
    OnnxAttribute a{.name = std::move(name), .type = Type::float_value};
    a.f = v;
    return a;
}

OnnxAttribute OnnxAttribute::of_int(std::string name, std::int64_t v) {
    OnnxAttribute a{.name = std::move(name), .type = Type::int_value};
    a.i = v;
    return a;
}

OnnxAttribute OnnxAttribute::of_string(std::string name, std::string v) {
    OnnxAttribute a{.name = std::move(name), .type = Type::string_value};
    a.s = std::move(v);
    return a;
}

OnnxAttribute OnnxAttribute::of_floats(std::string name, std::vector<float> v) {
    OnnxAttribute a{.name = std::move(name), .type = Type::floats};
    a.floats = std::move(v);
    return a;
}

OnnxAttribute OnnxAttribute::of_ints(std::string name, std::vector<std::int64_t> v) {
    OnnxAttribute a{.name = std::move(name), .type = Type::ints};
    a.ints = std::move(v);
    return a;
}

std::int64_t OnnxInitializer::element_count() const {
    std::int64_t elements = 1;
    for (const std::int64_t d : dims) elements *= d;
    return elements;
}

GraphBuilder::GraphBuilder(std::string graph_name, std::uint64_t seed)
    : graph_name_(std::move(graph_name)), seed_(seed) {}

void GraphBuilder::add_input(std::string name, OnnxElemType type, std::vector<OnnxDim> dims) {
    inputs_.push_back(OnnxValueInfo{std::move(name), type, std::move(dims)});
}

void GraphBuilder::add_output(std::string name, OnnxElemType type, std::vector<OnnxDim> dims) {
    outputs_.push_back(OnnxValueInfo{std::move(name), type, std::move(dims)});
}

void GraphBuilder::add_initializer(OnnxInitializer initializer) {
    const std::int64_t elements = initializer.element_count();
    const auto held = static_cast<std::int64_t>(initializer.data.size());
    if (initializer.fill ? held != 0 : elements != held) {
        throw std::logic_error(fmt::format("initializer '{}': {} values for {} elements", initializer.name,
                                           initializer.data.size(), elements));
    }
    if (!initializer_names_.insert(initializer.name).second) {
        throw std::logic_error(fmt::format("initializer '{}' defined twice", initializer.name));
    }
    initializers_.push_back(std::move(initializer));
}

void GraphBuilder::add_node(OnnxNode node) { nodes_.push_back(std::move(node)); }

void GraphBuilder::rename_value(std::string_view from, const std::string& to) {
    const auto rename = [&](std::string& value) {
        if (value == from) value = to;
    };
    for (auto& node : nodes_) {
        std::ranges::for_each(node.inputs, rename);
        std::ranges::for_each(node.outputs, rename);
    }
    for (auto& output : outputs_) rename(output.name);
}

std::size_t GraphBuilder::bind_dimension(std::string_view symbol, std::int64_t value) {
    std::size_t bound = 0;
    for (auto* infos : {&inputs_, &outputs_}) {
        for (auto& info : *infos) {
            for (auto& dim : info.dims) {
                if (!dim.param.empty() && dim.param == symbol) {
                    dim = OnnxDim::fixed(value);
                    ++bound;
                }
            }
        }
    }
    return bound;
}

void GraphBuilder::add_metadata(std::string key, std::string value) {
    metadata_.emplace_back(std::move(key), std::move(value));
}

WeightGenerator GraphBuilder::generator_for(std::string_view tensor_name) const {
    return WeightGenerator(tensor_seed(seed_, tensor_name));
}

std::int64_t GraphBuilder::parameter_count() const {
    std::int64_t count = 0;
    for (const auto& init : initializers_) {
        if (init.is_parameter) count += init.element_count();
    }
    return count;
}

void GraphBuilder::write(std::ostream& out, const OnnxExternalData* external) const {
    ProtoWriter head;
    head.write_int64(ModelField::ir_version, kOnnxIrVersion);
    head.write_string(ModelField::producer_name, kOnnxProducerName);
    if (!producer_version_.empty()) head.write_string(ModelField::producer_version, producer_version_);
    if (!doc_string_.empty()) head.write_string(ModelField::doc_string, doc_string_);
    const EncodedGraph graph = encode_graph(*this, external);
    head.write_length_header(ModelField::graph, graph.size);
    write_bytes(out, head.bytes());
    write_graph(out, graph, initializers_, external);

    ProtoWriter trailer;
    ProtoWriter opset;
    opset.write_string(kOpsetDomain, "");  // the default (ai.onnx) domain
    opset.write_int64(kOpsetVersion, opset_version_);
    trailer.write_message(ModelField::opset_import, opset);
    for (const auto& [key, value] : metadata_) {
        ProtoWriter entry;
        entry.write_string(kEntryKey, key);
        entry.write_string(kEntryValue, value);
        trailer.write_message(ModelField::metadata_props, entry);
    }
    write_bytes(out, trailer.bytes());
}

namespace {

// A stream that appends to a string reserved up front: an ostringstream grows by doubling, which
// copies a gigabyte of weights many times over (and faults in every copy's pages).
class AppendBuffer : public std::streambuf {
public:
    explicit AppendBuffer(std::string& bytes) : bytes_(bytes) {}

protected:
    std::streamsize xsputn(const char* data, std::streamsize count) override {
        bytes_.append(data, static_cast<std::size_t>(count));
        return count;
    }
    int_type overflow(int_type c) override {
        if (!traits_type::eq_int_type(c, traits_type::eof())) bytes_.push_back(traits_type::to_char_type(c));
        return traits_type::not_eof(c);
    }

private:
    std::string& bytes_;
};

}  // namespace

std::string GraphBuilder::serialize() const {
    // The weights plus a generous allowance for the graph's structure: one allocation in practice.
    std::size_t estimate = 64 * 1024 + 256 * nodes_.size();
    for (const auto& init : initializers_) estimate += 128 + init.name.size() + raw_size(init);
    std::string bytes;
    bytes.reserve(estimate);
    AppendBuffer buffer(bytes);
    std::ostream out(&buffer);
    write(out);
    return bytes;
}

}  // namespace inferbench::models
