#include "models/onnx_qdq.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "models/onnx_value_types.hpp"
#include "models/onnx_wire.hpp"

namespace inferbench::models::onnx {
namespace {

using wire::Field;

bool quantized_op(const OnnxNode& node) {
    const bool default_domain = node.domain.empty() || node.domain == "ai.onnx";
    return default_domain && (node.op_type == "Conv" || node.op_type == "MatMul" || node.op_type == "Gemm");
}

bool bias_slot(const OnnxNode& node, std::size_t index) {
    return index == 2 && (node.op_type == "Conv" || node.op_type == "Gemm");
}

std::int64_t int_attribute(const OnnxNode& node, std::string_view name, std::int64_t fallback) {
    const auto it = node.attributes.find(name);
    if (it == node.attributes.end()) return fallback;
    const auto* v = std::get_if<std::int64_t>(&it->second);
    return v ? *v : fallback;
}

std::vector<float> floats_of(const OnnxTensor& t) {
    std::vector<float> values(t.raw.size() / 4);
    std::memcpy(values.data(), t.raw.data(), values.size() * 4);
    return values;
}

template <typename T>
std::span<const std::byte> bytes_of(const std::vector<T>& values) {
    return {reinterpret_cast<const std::byte*>(values.data()), values.size() * sizeof(T)};
}

bool is_external(std::span<const std::byte> tensor) {
    for (const Field& f : wire::split(tensor))
        if (f.number == wire::TensorField::data_location && f.varint == 1) return true;
    return false;
}

// The model read twice: as plain structs (for decisions) and as bytes (for the rewrite).
struct ModelFile {
    OnnxModel model;
    std::string bytes;
    std::map<std::string, const OnnxTensor*, std::less<>> initializers;  // of the main graph

    explicit ModelFile(const std::filesystem::path& path) : model(read_onnx_file(path)), bytes(read_regular_file(path)) {
        for (const auto& t : model.graph.initializers) initializers.emplace(t.name, &t);
    }
    const OnnxTensor* initializer(const std::string& name) const {
        const auto it = initializers.find(name);
        return it == initializers.end() ? nullptr : it->second;
    }
};

// The main graph's initializer field, with its data inline if the file kept it outside.
void copy_initializer(const ModelFile& file, const Field& f, pb::ProtoWriter& out) {
    const OnnxTensor* t = file.initializer(wire::name_of(f.payload, wire::TensorField::name));
    if (t && is_external(f.payload)) out.write_message(f.number, wire::retyped_tensor(f.payload, t->data_type, t->raw));
    else out.write_raw(f.encoded);
}

template <typename RewriteGraph>
std::string rewrite_model(const ModelFile& file, const std::filesystem::path& path, RewriteGraph rewrite_graph) {
    try {
        pb::ProtoWriter out;
        for (const Field& f : wire::split(wire::as_bytes(file.bytes))) {
            if (f.number == wire::ModelField::graph) out.write_bytes(f.number, rewrite_graph(f.payload));
            else out.write_raw(f.encoded);
        }
        return out.take();
    } catch (const pb::DecodeError& e) {
        throw UserError(fmt::format("{}: not an ONNX model: {} at byte {}", path.string(), e.what(), e.offset()));
    }
}

class QdqRewriter {
public:
    QdqRewriter(const ModelFile& file, const std::map<std::string, quant::QuantParams, std::less<>>& activations,
                const QdqSettings& settings)
        : file_(file), activations_(activations), settings_(settings), types_(infer_value_types(file.model)) {
        for (const auto& [name, type] : types_) taken_.insert(name);
        count_uses(file.model.graph);
        for (const auto& out : file.model.graph.outputs) graph_outputs_.insert(out.name);
    }

    std::string graph(std::span<const std::byte> bytes) {
        // Weights and biases first: their DequantizeLinear nodes go before every other node.
        for (const auto& node : file_.model.graph.nodes)
            if (quantized_op(node)) plan_weights(node);
        pb::ProtoWriter out;
        std::size_t k = 0;
        bool started = false;
        for (const Field& f : wire::split(bytes)) {
            if (f.number == wire::GraphField::node) {
                if (!started) start(out, started);
                node(f.payload, file_.model.graph.nodes.at(k++), out);
            } else if (f.number == wire::GraphField::initializer) {
                if (!dropped_.contains(wire::name_of(f.payload, wire::TensorField::name))) copy_initializer(file_, f, out);
            } else {
                out.write_raw(f.encoded);
            }
        }
        if (!started) start(out, started);
        for (const auto& t : new_initializers_) out.write_message(wire::GraphField::initializer, t);
        return out.take();
    }

private:
    void count_uses(const OnnxGraph& g) {
        for (const auto& node : g.nodes) {
            for (const auto& in : node.inputs) ++uses_[in];
            for (const auto& [name, sub] : node.subgraphs) count_uses(*sub);
        }
    }

    std::string unique(const std::string& base) {
        std::string name = base;
        for (int k = 1; taken_.contains(name); ++k) name = fmt::format("{}.{}", base, k);
        taken_.insert(name);
        return name;
    }

    const quant::QuantParams* params(const std::string& name) const {
        const auto it = activations_.find(name);
        return it == activations_.end() ? nullptr : &it->second;
    }

    // The first node's place: Q/DQ of quantized graph inputs, DQ of the weights.
    void start(pb::ProtoWriter& out, bool& started) {
        for (const auto& in : file_.model.graph.inputs)
            if (params(in.name) && !file_.initializer(in.name)) quantize_activation(in.name, out);
        for (const auto& dq : weight_nodes_) out.write_message(wire::GraphField::node, dq);
        started = true;
    }

    pb::ProtoWriter scalar(const std::string& name, DataType type, std::int32_t value, float scale) {
        std::vector<std::byte> raw(type == DataType::float32 || type == DataType::int32 ? 4 : 1);
        if (type == DataType::float32) std::memcpy(raw.data(), &scale, 4);
        else if (type == DataType::int32) std::memcpy(raw.data(), &value, 4);
        else raw[0] = static_cast<std::byte>(value & 0xFF);
        return wire::tensor(name, type, {}, raw);
    }

    void quantize_activation(const std::string& name, pb::ProtoWriter& out) {
        const quant::QuantParams& p = *params(name);
        const std::string scale = unique(name + "_scale");
        const std::string zero = unique(name + "_zero_point");
        const std::string q = unique(name + "_quantized");
        const std::string dq = unique(name + "_dequantized");
        new_initializers_.push_back(scalar(scale, DataType::float32, 0, p.scale));
        new_initializers_.push_back(scalar(zero, quantized_type(settings_.activation), p.zero_point, 0));
        const std::vector<std::string> q_in{name, scale, zero}, q_out{q}, dq_in{q, scale, zero}, dq_out{dq};
        out.write_message(wire::GraphField::node, wire::node("QuantizeLinear", unique(name + "_QuantizeLinear"), q_in, q_out));
        out.write_message(wire::GraphField::node,
                          wire::node("DequantizeLinear", unique(name + "_DequantizeLinear"), dq_in, dq_out));
        dequantized_.emplace(name, dq);
    }

    std::optional<std::size_t> weight_axis(const OnnxNode& node, const OnnxTensor& w) const {
        if (!settings_.per_channel) return std::nullopt;
        if (node.op_type == "Conv") return 0;
        if (node.op_type == "Gemm") return int_attribute(node, "transB", 0) != 0 ? 0 : 1;
        if (w.dims.size() == 2) return 1;  // MatMul: one scale per output column
        return std::nullopt;
    }

    // An int8 (or, for FP8 activations, FP8) copy of `w` with its scales and a DequantizeLinear; returns the
    // dequantized name.
    std::string quantize_weight(const OnnxTensor& w, std::optional<std::size_t> axis, std::vector<float>& scales) {
        if (settings_.activation == quant::ActivationType::float8e4m3) {
            std::vector<std::uint8_t> fp8;
            scales = quant::quantize_weights_fp8(floats_of(w), w.dims, axis, fp8);
            return add_dequantize(w.name, DataType::float8e4m3fn, w.dims, bytes_of(fp8), scales, axis);
        }
        std::vector<std::int8_t> q;
        scales = quant::quantize_weights(floats_of(w), w.dims, axis, q, settings_.weight_range);
        return add_dequantize(w.name, DataType::int8, w.dims, bytes_of(q), scales, axis);
    }

    std::string add_dequantize(const std::string& name, DataType type, std::span<const std::int64_t> dims,
                               std::span<const std::byte> data, const std::vector<float>& scales,
                               std::optional<std::size_t> axis) {
        const std::string q = unique(name + "_quantized");
        const std::string scale = unique(name + "_scale");
        const std::string zero = unique(name + "_zero_point");
        const std::string dq = unique(name + "_dequantized");
        new_initializers_.push_back(wire::tensor(q, type, dims, data));
        const std::vector<std::int64_t> channel_dims{static_cast<std::int64_t>(scales.size())};
        const std::span<const std::int64_t> scale_dims = axis ? std::span<const std::int64_t>(channel_dims)
                                                              : std::span<const std::int64_t>();
        new_initializers_.push_back(wire::tensor(scale, DataType::float32, scale_dims, bytes_of(scales)));
        const std::size_t zero_bytes = scales.size() * (type == DataType::int32 ? 4 : 1);
        new_initializers_.push_back(wire::tensor(zero, type, scale_dims, std::vector<std::byte>(zero_bytes)));
        const std::vector<std::string> in{q, scale, zero}, out{dq};
        pb::ProtoWriter dq_node = wire::node("DequantizeLinear", unique(name + "_DequantizeLinear"), in, out);
        if (axis) wire::add_int_attribute(dq_node, "axis", static_cast<std::int64_t>(*axis));
        weight_nodes_.push_back(std::move(dq_node));
        return dq;
    }

    void plan_weights(const OnnxNode& node) {
        std::vector<float> weight_scales;
        std::optional<std::size_t> axis;
        for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            const OnnxTensor* w = file_.initializer(node.inputs[i]);
            if (!w || w->data_type != DataType::float32 || bias_slot(node, i)) continue;
            if (replaced_.contains({&node, i})) continue;
            const auto a = i == 1 ? weight_axis(node, *w) : std::nullopt;
            std::vector<float> scales;
            replace(node, i, quantize_weight(*w, a, scales));
            if (i == 1) {
                weight_scales = scales;
                axis = a;
            }
        }
        // FP8 has no integer bias: TensorRT adds the float bias itself.
        const bool fp8 = settings_.activation == quant::ActivationType::float8e4m3;
        if (settings_.quantize_bias && !fp8 && bias_slot(node, 2) && node.inputs.size() > 2 && !weight_scales.empty())
            plan_bias(node, weight_scales, axis);
    }

    void plan_bias(const OnnxNode& node, const std::vector<float>& weight_scales, std::optional<std::size_t> axis) {
        const OnnxTensor* b = file_.initializer(node.inputs[2]);
        const quant::QuantParams* x = params(node.inputs[0]);
        if (!b || b->data_type != DataType::float32 || !x || b->dims.size() != 1) return;
        const std::vector<float> values = floats_of(*b);
        if (axis && weight_scales.size() != values.size()) return;
        std::vector<float> scales(axis ? values.size() : 1);
        for (std::size_t c = 0; c < scales.size(); ++c) scales[c] = x->scale * weight_scales[axis ? c : 0];
        std::vector<std::int32_t> q(values.size());
        for (std::size_t c = 0; c < values.size(); ++c) {
            const double v = std::nearbyint(static_cast<double>(values[c]) / scales[axis ? c : 0]);
            q[c] = static_cast<std::int32_t>(std::clamp(v, -2147483648.0, 2147483647.0));
        }
        replace(node, 2, add_dequantize(b->name, DataType::int32, b->dims, bytes_of(q), scales, axis ? std::optional<std::size_t>(0) : std::nullopt));
    }

    void replace(const OnnxNode& node, std::size_t index, const std::string& dq) {
        replaced_.emplace(std::make_pair(&node, index), dq);
        const std::string& name = node.inputs[index];
        if (++replaced_uses_[name] == uses_[name] && !graph_outputs_.contains(name)) dropped_.insert(name);
    }

    void node(std::span<const std::byte> bytes, const OnnxNode& plain, pb::ProtoWriter& out) {
        pb::ProtoWriter w;
        std::size_t input = 0;
        for (const Field& f : wire::split(bytes)) {
            if (f.number != wire::NodeField::input) {
                w.write_raw(f.encoded);
                continue;
            }
            const std::string name(wire::as_text(f.payload));
            const auto weight = replaced_.find({&plain, input++});
            const auto activation = dequantized_.find(name);
            if (weight != replaced_.end()) w.write_string(f.number, weight->second);
            else if (activation != dequantized_.end()) w.write_string(f.number, activation->second);
            else w.write_raw(f.encoded);
        }
        out.write_message(wire::GraphField::node, w);
        for (const auto& o : plain.outputs)
            if (!o.empty() && params(o)) quantize_activation(o, out);
    }

    const ModelFile& file_;
    const std::map<std::string, quant::QuantParams, std::less<>>& activations_;
    const QdqSettings& settings_;
    ValueTypes types_;
    std::set<std::string, std::less<>> taken_;
    std::map<std::string, std::size_t, std::less<>> uses_;
    std::map<std::string, std::size_t, std::less<>> replaced_uses_;
    std::set<std::string, std::less<>> graph_outputs_;
    std::map<std::pair<const OnnxNode*, std::size_t>, std::string> replaced_;  // (node, input) -> dequantized weight
    std::set<std::string, std::less<>> dropped_;                              // initializers no node reads any more
    std::map<std::string, std::string, std::less<>> dequantized_;             // activation -> its DQ output
    std::vector<pb::ProtoWriter> weight_nodes_;
    std::vector<pb::ProtoWriter> new_initializers_;
};

}  // namespace

std::vector<std::string> qdq_activations(const OnnxModel& model) {
    const ValueTypes types = infer_value_types(model);
    std::set<std::string, std::less<>> initializers, graph_outputs, consumed, seen;
    for (const auto& t : model.graph.initializers) initializers.insert(t.name);
    for (const auto& o : model.graph.outputs) graph_outputs.insert(o.name);
    for (const auto& node : model.graph.nodes)
        for (const auto& in : node.inputs) consumed.insert(in);
    std::vector<std::string> names;
    const auto add = [&](const std::string& name) {
        if (name.empty() || initializers.contains(name) || type_of(types, name) != DataType::float32) return;
        if (seen.insert(name).second) names.push_back(name);
    };
    for (const auto& node : model.graph.nodes) {
        if (!quantized_op(node)) continue;
        for (std::size_t i = 0; i < node.inputs.size(); ++i)
            if (!bias_slot(node, i)) add(node.inputs[i]);
        for (const auto& o : node.outputs)
            if (consumed.contains(o) && !graph_outputs.contains(o)) add(o);
    }
    return names;
}

std::string with_extra_outputs(const std::filesystem::path& path, std::span<const std::string> names) {
    const ModelFile file(path);
    return rewrite_model(file, path, [&](std::span<const std::byte> graph) {
        pb::ProtoWriter out;
        for (const Field& f : wire::split(graph)) {
            if (f.number == wire::GraphField::initializer) copy_initializer(file, f, out);
            else out.write_raw(f.encoded);
        }
        for (const auto& name : names) out.write_message(wire::GraphField::output, wire::value_info(name, DataType::float32));
        return out.take();
    });
}

DataType quantized_type(quant::ActivationType type) {
    switch (type) {
        case quant::ActivationType::int8: return DataType::int8;
        case quant::ActivationType::uint8: return DataType::uint8;
        case quant::ActivationType::float8e4m3: return DataType::float8e4m3fn;
    }
    return DataType::int8;
}

std::string quantize_to_qdq(const std::filesystem::path& path,
                            const std::map<std::string, quant::QuantParams, std::less<>>& activations,
                            const QdqSettings& settings) {
    const ModelFile file(path);
    if (settings.per_channel && file.model.opset_version() < 13)
        throw UserError(fmt::format("{}: opset {} is below 13, the first whose QuantizeLinear takes per-channel scales; "
                                    "export the model at opset 13 or newer, or set per_channel: false",
                                    path.string(), file.model.opset_version()));
    if (settings.activation == quant::ActivationType::float8e4m3 && file.model.opset_version() < kFloat8QdqOpset)
        throw UserError(fmt::format("{}: opset {} is below {}, the first whose QuantizeLinear takes FP8 (float8e4m3fn); "
                                    "export the model at opset {} or newer for fp8",
                                    path.string(), file.model.opset_version(), kFloat8QdqOpset, kFloat8QdqOpset));
    QdqRewriter rewriter(file, activations, settings);
    std::string quantized = rewrite_model(file, path, [&](std::span<const std::byte> graph) { return rewriter.graph(graph); });
    if (quantized.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw UserError(fmt::format("{}: the {} model would be over the 2 GiB one ONNX file can hold", path.string(),
                                    to_string(settings.activation)));
    return quantized;
}

}  // namespace inferbench::models::onnx
