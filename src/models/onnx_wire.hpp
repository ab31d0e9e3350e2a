// ONNX messages at the wire level, for transforms that rewrite a model (onnx_fp16, onnx_qdq): a message is
// split into its encoded fields, and every field a transform does not change is copied byte for byte, so
// whatever this reader does not know (newer fields, doc strings, metadata, functions) survives unchanged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "models/onnx_reader.hpp"
#include "models/protobuf_reader.hpp"
#include "models/protobuf_writer.hpp"

namespace inferbench::models::onnx::wire {

// Field numbers of onnx/onnx.proto that the transforms touch.
struct ModelField {
    static constexpr std::uint32_t graph = 7, opset_import = 8;
};
struct GraphField {
    static constexpr std::uint32_t node = 1, initializer = 5, input = 11, output = 12, value_info = 13;
};
struct NodeField {
    static constexpr std::uint32_t input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7;
};
struct AttributeField {
    static constexpr std::uint32_t name = 1, f = 2, i = 3, t = 5, g = 6, floats = 7, graphs = 11, type = 20;
};
struct TensorField {
    static constexpr std::uint32_t dims = 1, data_type = 2, float_data = 4, int32_data = 5, string_data = 6,
                                   int64_data = 7, name = 8, raw_data = 9, double_data = 10, uint64_data = 11,
                                   external_data = 13, data_location = 14;
};
// AttributeProto.AttributeType values written here.
inline constexpr std::int64_t kAttributeFloat = 1, kAttributeInt = 2, kAttributeTensor = 4, kAttributeGraph = 5;

// One encoded field: `encoded` is its key and value as they are in the message.
struct Field {
    std::uint32_t number = 0;
    pb::WireType type = pb::WireType::varint;
    std::span<const std::byte> encoded;
    std::span<const std::byte> payload;  // length-delimited fields: the value without its length
    std::uint64_t varint = 0;            // varint fields: the value
};

// Throws pb::DecodeError for malformed data.
std::vector<Field> split(std::span<const std::byte> message);

std::span<const std::byte> as_bytes(std::string_view text);
std::string_view as_text(std::span<const std::byte> bytes);

// A NodeProto with the given inputs, outputs and op type, in the default domain, without attributes;
// add them with add_int_attribute() / add_tensor_attribute().
pb::ProtoWriter node(std::string_view op_type, std::string_view name, std::span<const std::string> inputs,
                     std::span<const std::string> outputs);
void add_int_attribute(pb::ProtoWriter& node, std::string_view name, std::int64_t value);
void add_tensor_attribute(pb::ProtoWriter& node, std::string_view name, const pb::ProtoWriter& tensor);
// Cast(input) -> output, to `to`.
pb::ProtoWriter cast_node(std::string_view name, const std::string& input, const std::string& output, DataType to);

// A TensorProto with its data in raw_data (little-endian, as ONNX keeps it).
pb::ProtoWriter tensor(std::string_view name, DataType type, std::span<const std::int64_t> dims,
                       std::span<const std::byte> raw);

// `original` (an encoded TensorProto) with new data: every field but the data, its type and where it is
// kept (external data) copied as it was; then `type` and `raw` as raw_data.
pb::ProtoWriter retyped_tensor(std::span<const std::byte> original, DataType type, std::span<const std::byte> raw);

// An encoded ValueInfoProto with its tensor element type replaced by `type` where it was `from`; any
// other value info is returned as it was.
std::string retyped_value_info(std::span<const std::byte> value_info, DataType from, DataType type);
// A ValueInfoProto of a tensor of `type`, rank unknown: what a graph output needs to be read back.
pb::ProtoWriter value_info(std::string_view name, DataType type);

// The name (field 1) of an encoded NodeProto's attribute, TensorProto or ValueInfoProto.
std::string name_of(std::span<const std::byte> message, std::uint32_t name_field);

}  // namespace inferbench::models::onnx::wire
