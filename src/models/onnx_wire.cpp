#include "models/onnx_wire.hpp"

namespace inferbench::models::onnx::wire {
namespace {

// ValueInfoProto.type, TypeProto.tensor_type, TypeProto.Tensor.elem_type.
constexpr std::uint32_t kValueInfoName = 1, kValueInfoType = 2, kTypeTensorType = 1, kTensorElemType = 1;

// `message` with the length-delimited field `number` replaced by `rewrite(payload)`, other fields copied.
template <typename Rewrite>
std::string rewrite_submessage(std::span<const std::byte> message, std::uint32_t number, Rewrite rewrite) {
    pb::ProtoWriter out;
    for (const Field& f : split(message)) {
        if (f.number == number && f.type == pb::WireType::length_delimited) {
            out.write_bytes(number, rewrite(f.payload));
        } else {
            out.write_raw(f.encoded);
        }
    }
    return out.take();
}

}  // namespace

std::vector<Field> split(std::span<const std::byte> message) {
    std::vector<Field> fields;
    pb::ProtoReader r(message);
    while (r.next_field()) {
        Field f;
        f.number = r.field();
        f.type = r.wire_type();
        const std::size_t start = r.field_offset();
        if (f.type == pb::WireType::length_delimited) {
            f.payload = r.read_bytes();
        } else if (f.type == pb::WireType::varint) {
            f.varint = r.read_uint64();
        } else {
            r.skip();
        }
        f.encoded = message.subspan(start, r.offset() - start);
        fields.push_back(f);
    }
    return fields;
}

std::span<const std::byte> as_bytes(std::string_view text) {
    return {reinterpret_cast<const std::byte*>(text.data()), text.size()};
}

std::string_view as_text(std::span<const std::byte> bytes) {
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

pb::ProtoWriter node(std::string_view op_type, std::string_view name, std::span<const std::string> inputs,
                     std::span<const std::string> outputs) {
    pb::ProtoWriter w;
    for (const auto& input : inputs) w.write_string(NodeField::input, input);
    for (const auto& output : outputs) w.write_string(NodeField::output, output);
    w.write_string(NodeField::name, name);
    w.write_string(NodeField::op_type, op_type);
    return w;
}

void add_int_attribute(pb::ProtoWriter& node, std::string_view name, std::int64_t value) {
    pb::ProtoWriter a;
    a.write_string(AttributeField::name, name);
    a.write_int64(AttributeField::i, value);
    a.write_int64(AttributeField::type, kAttributeInt);
    node.write_message(NodeField::attribute, a);
}

void add_tensor_attribute(pb::ProtoWriter& node, std::string_view name, const pb::ProtoWriter& tensor) {
    pb::ProtoWriter a;
    a.write_string(AttributeField::name, name);
    a.write_message(AttributeField::t, tensor);
    a.write_int64(AttributeField::type, kAttributeTensor);
    node.write_message(NodeField::attribute, a);
}

pb::ProtoWriter cast_node(std::string_view name, const std::string& input, const std::string& output, DataType to) {
    pb::ProtoWriter w = node("Cast", name, std::span(&input, 1), std::span(&output, 1));
    add_int_attribute(w, "to", static_cast<std::int64_t>(to));
    return w;
}

pb::ProtoWriter tensor(std::string_view name, DataType type, std::span<const std::int64_t> dims,
                       std::span<const std::byte> raw) {
    pb::ProtoWriter w;
    for (const std::int64_t d : dims) w.write_int64(TensorField::dims, d);
    w.write_int64(TensorField::data_type, static_cast<std::int64_t>(type));
    w.write_string(TensorField::name, name);
    w.write_bytes(TensorField::raw_data, as_text(raw));
    return w;
}

pb::ProtoWriter retyped_tensor(std::span<const std::byte> original, DataType type, std::span<const std::byte> raw) {
    pb::ProtoWriter w;
    for (const Field& f : split(original)) {
        switch (f.number) {
            case TensorField::data_type:
            case TensorField::float_data:
            case TensorField::int32_data:
            case TensorField::string_data:
            case TensorField::int64_data:
            case TensorField::raw_data:
            case TensorField::double_data:
            case TensorField::uint64_data:
            case TensorField::external_data:
            case TensorField::data_location:
                break;
            default:
                w.write_raw(f.encoded);
        }
    }
    w.write_int64(TensorField::data_type, static_cast<std::int64_t>(type));
    w.write_bytes(TensorField::raw_data, as_text(raw));
    return w;
}

std::string retyped_value_info(std::span<const std::byte> value_info, DataType from, DataType type) {
    const auto retype_tensor = [&](std::span<const std::byte> tensor_type) {
        pb::ProtoWriter out;
        for (const Field& f : split(tensor_type)) {
            if (f.number == kTensorElemType && f.type == pb::WireType::varint &&
                f.varint == static_cast<std::uint64_t>(from)) {
                out.write_int64(kTensorElemType, static_cast<std::int64_t>(type));
            } else {
                out.write_raw(f.encoded);
            }
        }
        return out.take();
    };
    return rewrite_submessage(value_info, kValueInfoType, [&](std::span<const std::byte> type_proto) {
        return rewrite_submessage(type_proto, kTypeTensorType,
                                  [&](std::span<const std::byte> tensor_type) { return retype_tensor(tensor_type); });
    });
}

pb::ProtoWriter value_info(std::string_view name, DataType type) {
    pb::ProtoWriter tensor_type;
    tensor_type.write_int64(kTensorElemType, static_cast<std::int64_t>(type));
    pb::ProtoWriter type_proto;
    type_proto.write_message(kTypeTensorType, tensor_type);
    pb::ProtoWriter w;
    w.write_string(kValueInfoName, name);
    w.write_message(kValueInfoType, type_proto);
    return w;
}

std::string name_of(std::span<const std::byte> message, std::uint32_t name_field) {
    for (const Field& f : split(message))
        if (f.number == name_field && f.type == pb::WireType::length_delimited) return std::string(as_text(f.payload));
    return {};
}

}  // namespace inferbench::models::onnx::wire
