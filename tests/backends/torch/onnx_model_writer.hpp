// Writes an in-memory onnx::OnnxModel (the reader's structs, which the test graphs build) as
// ModelProto bytes, so ONNX Runtime can run exactly the graph the interpreter ran: any element
// type, any attribute kind the reader keeps. Field numbers from onnx/onnx.proto.
#pragma once

#include <string>
#include <type_traits>
#include <variant>

#include "models/onnx_reader.hpp"
#include "models/protobuf_writer.hpp"

namespace inferbench::torch_onnx::test_graphs {

namespace detail {

using models::pb::ProtoWriter;
using models::pb::WireType;

inline ProtoWriter tensor_proto(const models::onnx::OnnxTensor& t) {
    ProtoWriter w;
    for (const std::int64_t d : t.dims) w.write_int64(1, d);
    w.write_int32(2, static_cast<std::int32_t>(t.data_type));
    w.write_string(8, t.name);
    w.write_bytes(9, std::string_view(reinterpret_cast<const char*>(t.raw.data()), t.raw.size()));
    return w;
}

inline ProtoWriter attribute_proto(const std::string& name, const models::onnx::OnnxAttributeValue& value) {
    ProtoWriter w;
    w.write_string(1, name);
    std::visit(
        [&w](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, float>) {
                w.write_float(2, v);
                w.write_int32(20, 1);
            } else if constexpr (std::is_same_v<T, std::int64_t>) {
                w.write_int64(3, v);
                w.write_int32(20, 2);
            } else if constexpr (std::is_same_v<T, std::string>) {
                w.write_string(4, v);
                w.write_int32(20, 3);
            } else if constexpr (std::is_same_v<T, models::onnx::OnnxTensor>) {
                w.write_message(5, tensor_proto(v));
                w.write_int32(20, 4);
            } else if constexpr (std::is_same_v<T, std::vector<float>>) {
                for (const float f : v) w.write_float(7, f);
                w.write_int32(20, 6);
            } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
                for (const std::int64_t i : v) w.write_int64(8, i);
                w.write_int32(20, 7);
            } else {
                for (const std::string& s : v) w.write_string(9, s);
                w.write_int32(20, 8);
            }
        },
        value);
    return w;
}

inline ProtoWriter value_info_proto(const models::onnx::OnnxValueInfo& info) {
    ProtoWriter w;
    w.write_string(1, info.name);
    if (info.elem_type == models::onnx::DataType::undefined) return w;
    ProtoWriter tensor;
    tensor.write_int32(1, static_cast<std::int32_t>(info.elem_type));
    if (info.has_shape) {
        ProtoWriter shape;
        for (const auto& dim : info.dims) {
            ProtoWriter d;
            if (const auto* fixed = std::get_if<std::int64_t>(&dim)) {
                d.write_int64(1, *fixed);
            } else {
                d.write_string(2, std::get<std::string>(dim));
            }
            shape.write_message(1, d);
        }
        tensor.write_message(2, shape);
    }
    ProtoWriter type;
    type.write_message(1, tensor);
    w.write_message(2, type);
    return w;
}

}  // namespace detail

inline std::string serialize(const models::onnx::OnnxModel& m) {
    using detail::ProtoWriter;
    ProtoWriter graph;
    for (const auto& node : m.graph.nodes) {
        ProtoWriter n;
        for (const auto& i : node.inputs) n.write_string(1, i);
        for (const auto& o : node.outputs) n.write_string(2, o);
        n.write_string(3, node.name);
        n.write_string(4, node.op_type);
        for (const auto& [name, value] : node.attributes) n.write_message(5, detail::attribute_proto(name, value));
        if (!node.domain.empty()) n.write_string(7, node.domain);
        graph.write_message(1, n);
    }
    graph.write_string(2, m.graph.name.empty() ? "test" : m.graph.name);
    for (const auto& t : m.graph.initializers) graph.write_message(5, detail::tensor_proto(t));
    for (const auto& i : m.graph.inputs) graph.write_message(11, detail::value_info_proto(i));
    for (const auto& o : m.graph.outputs) graph.write_message(12, detail::value_info_proto(o));
    ProtoWriter model;
    model.write_int64(1, m.ir_version);
    for (const auto& opset : m.opset_imports) {
        ProtoWriter o;
        if (!opset.domain.empty()) o.write_string(1, opset.domain);
        o.write_int64(2, opset.version);
        model.write_message(8, o);
    }
    model.write_message(7, graph);
    return model.take();
}

}  // namespace inferbench::torch_onnx::test_graphs
