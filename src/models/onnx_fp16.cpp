#include "models/onnx_fp16.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "models/onnx_tensor_reader.hpp"
#include "models/onnx_value_types.hpp"
#include "models/onnx_wire.hpp"

namespace inferbench::models::onnx {
namespace {

using wire::Field;

// ONNX Runtime's float16 converter's default block list (onnxruntime/python/tools/transformers/float16.py):
// traditional-ML ops without float16 kernels, and ops whose float16 results drift (TopK, CumSum, Range,
// Min/Max, RoiAlign, NonMaxSuppression, the upsamplers).
constexpr std::string_view kDefaultBlockList[] = {
    "ArrayFeatureExtractor", "Binarizer", "CastMap", "CategoryMapper", "DictVectorizer", "FeatureVectorizer",
    "Imputer", "LabelEncoder", "LinearClassifier", "LinearRegressor", "Normalizer", "OneHotEncoder",
    "RandomUniformLike", "SVMClassifier", "SVMRegressor", "Scaler", "TreeEnsembleClassifier",
    "TreeEnsembleRegressor", "TreeEnsemble", "ZipMap", "NonMaxSuppression", "TopK", "RoiAlign", "Range", "CumSum",
    "Min", "Max", "Upsample"};

// Inputs that stay float32 in a converted node (Resize takes its scales as float32 only).
struct AlwaysFloatInput {
    std::string_view op;
    std::size_t index;
};
constexpr AlwaysFloatInput kAlwaysFloatInputs[] = {{"Resize", 2}};

bool always_float_input(std::string_view op, std::size_t index) {
    for (const auto& a : kAlwaysFloatInputs)
        if (a.op == op && a.index == index) return true;
    return false;
}

// Generator ops whose output type is their `dtype` attribute; for the first two it defaults to float.
constexpr std::string_view kDtypeOps[] = {"RandomNormal", "RandomUniform", "EyeLike", "RandomNormalLike",
                                          "RandomUniformLike", "Bernoulli", "Multinomial"};

bool has_dtype_attribute(std::string_view op) {
    for (const auto o : kDtypeOps)
        if (o == op) return true;
    return false;
}

std::uint16_t to_low(float value, DataType low) { return low == DataType::bfloat16 ? to_bf16(value) : to_fp16_clamped(value); }

std::vector<std::byte> low_bytes(const OnnxTensor& tensor, DataType low) {
    const std::size_t n = tensor.raw.size() / 4;
    std::vector<std::byte> out(n * 2);
    for (std::size_t i = 0; i < n; ++i) {
        float v = 0;
        std::memcpy(&v, tensor.raw.data() + 4 * i, 4);
        const std::uint16_t h = to_low(v, low);
        out[2 * i] = static_cast<std::byte>(h & 0xFFU);
        out[2 * i + 1] = static_cast<std::byte>(h >> 8U);
    }
    return out;
}

std::vector<std::byte> low_bytes(std::span<const float> values, DataType low) {
    OnnxTensor t;
    t.raw.resize(values.size() * 4);
    std::memcpy(t.raw.data(), values.data(), t.raw.size());
    return low_bytes(t, low);
}

struct NodeView {
    std::string op;
    std::string domain;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    bool has_value_attribute = false;
    bool has_dtype = false;
};

NodeView view_node(const std::vector<Field>& fields) {
    NodeView v;
    for (const Field& f : fields) {
        if (f.number == wire::NodeField::op_type) v.op = wire::as_text(f.payload);
        else if (f.number == wire::NodeField::domain) v.domain = wire::as_text(f.payload);
        else if (f.number == wire::NodeField::input) v.inputs.emplace_back(wire::as_text(f.payload));
        else if (f.number == wire::NodeField::output) v.outputs.emplace_back(wire::as_text(f.payload));
        else if (f.number == wire::NodeField::attribute) {
            const std::string name = wire::name_of(f.payload, wire::AttributeField::name);
            v.has_value_attribute = v.has_value_attribute || name == "value";
            v.has_dtype = v.has_dtype || name == "dtype";
        }
    }
    if (v.domain == "ai.onnx") v.domain.clear();
    return v;
}

class Fp16Converter {
public:
    Fp16Converter(const OnnxModel& model, const Fp16Options& options, std::string source)
        : options_(options), low_(options.low_type), types_(infer_value_types(model)), source_(std::move(source)) {
        for (const auto& [name, type] : types_) taken_.insert(name);
        analyse(model.graph);
        for (const auto& [name, uses] : float_initializers_)
            if (!uses.fp16) kept_fp32_.insert(name);
        if (options_.keep_io_types) plan_io_casts(model.graph);
    }

    std::string model(std::span<const std::byte> bytes) {
        pb::ProtoWriter out;
        for (const Field& f : wire::split(bytes)) {
            if (f.number == wire::ModelField::graph) out.write_bytes(f.number, graph(f.payload, true));
            else out.write_raw(f.encoded);
        }
        return out.take();
    }

private:
    struct Uses {
        bool fp16 = false;
    };

    bool blocked(const NodeView& node) const { return node.domain.empty() && options_.op_block_list.contains(node.op); }
    bool blocked(const OnnxNode& node) const {
        return (node.domain.empty() || node.domain == "ai.onnx") && options_.op_block_list.contains(node.op_type);
    }

    void analyse(const OnnxGraph& g) {
        for (const auto& t : g.initializers) {
            tensors_.emplace(t.name, &t);
            if (t.data_type == DataType::float32) float_initializers_.try_emplace(t.name);
        }
        for (const auto& node : g.nodes) {
            node_names_.insert(node.name);
            for (std::size_t i = 0; i < node.inputs.size(); ++i) {
                const auto it = float_initializers_.find(node.inputs[i]);
                if (it != float_initializers_.end() && !blocked(node) && !always_float_input(node.op_type, i))
                    it->second.fp16 = true;
            }
            for (const auto& [name, sub] : node.subgraphs) analyse(*sub);
        }
        // An initializer the graph returns as an output is read at float16 like everything else.
        for (const auto& out : g.outputs)
            if (auto it = float_initializers_.find(out.name); it != float_initializers_.end()) it->second.fp16 = true;
    }

    void plan_io_casts(const OnnxGraph& g) {
        std::set<std::string, std::less<>> inputs;
        for (const auto& in : g.inputs) {
            inputs.insert(in.name);
            if (in.elem_type != DataType::float32 || tensors_.contains(in.name)) continue;
            const std::string cast = unique(in.name + ".fp16");
            rename_.emplace(in.name, cast);
            input_casts_.push_back({in.name, cast});
        }
        for (const auto& out : g.outputs) {
            if (out.elem_type != DataType::float32 || inputs.contains(out.name) || tensors_.contains(out.name)) continue;
            const std::string cast = unique(out.name + ".fp16");
            rename_.emplace(out.name, cast);
            output_casts_.push_back({cast, out.name});
        }
    }

    bool is_fp16(const std::string& name) const {
        return type_of(types_, name) == DataType::float32 && !kept_fp32_.contains(name);
    }

    std::string renamed(const std::string& name) const {
        const auto it = rename_.find(name);
        return it == rename_.end() ? name : it->second;
    }

    // A Cast node's name: the value it writes, unless a node of the model already has that name (ONNX Runtime
    // refuses a graph with two nodes of one name).
    std::string node_name(const std::string& base) {
        std::string name = base;
        for (int k = 1; node_names_.contains(name); ++k) name = fmt::format("{}.cast{}", base, k);
        node_names_.insert(name);
        return name;
    }

    std::string unique(const std::string& base) {
        std::string name = base;
        for (int k = 1; taken_.contains(name); ++k) name = fmt::format("{}.{}", base, k);
        taken_.insert(name);
        return name;
    }

    std::string graph(std::span<const std::byte> bytes, bool top) {
        pb::ProtoWriter out;
        bool casts_written = !top;
        const auto write_input_casts = [&] {
            for (const auto& [from, to] : input_casts_)
                out.write_message(wire::GraphField::node, wire::cast_node(node_name(to), from, to, low_));
            casts_written = true;
        };
        for (const Field& f : wire::split(bytes)) {
            switch (f.number) {
                case wire::GraphField::node:
                    if (!casts_written) write_input_casts();
                    node(f.payload, out);
                    break;
                case wire::GraphField::initializer:
                    initializer(f, out);
                    break;
                case wire::GraphField::input:
                case wire::GraphField::output:
                case wire::GraphField::value_info:
                    value_info(f, out);
                    break;
                default:
                    out.write_raw(f.encoded);
            }
        }
        if (!casts_written) write_input_casts();
        if (top)
            for (const auto& [from, to] : output_casts_)
                out.write_message(wire::GraphField::node, wire::cast_node(node_name(from), from, to, DataType::float32));
        return out.take();
    }

    void value_info(const Field& f, pb::ProtoWriter& out) const {
        const std::string name = wire::name_of(f.payload, 1);
        // Kept graph inputs and outputs (their names stay float32), and float32-only initializers.
        if (rename_.contains(name) || kept_fp32_.contains(name)) {
            out.write_raw(f.encoded);
            return;
        }
        out.write_bytes(f.number, wire::retyped_value_info(f.payload, DataType::float32, low_));
    }

    void initializer(const Field& f, pb::ProtoWriter& out) const {
        const std::string name = wire::name_of(f.payload, wire::TensorField::name);
        const auto it = tensors_.find(name);
        bool external = false;
        for (const Field& t : wire::split(f.payload))
            external = external || (t.number == wire::TensorField::data_location && t.varint == 1);
        if (it == tensors_.end()) {
            out.write_raw(f.encoded);
        } else if (it->second->data_type == DataType::float32 && !kept_fp32_.contains(name)) {
            out.write_message(f.number, wire::retyped_tensor(f.payload, low_, low_bytes(*it->second, low_)));
        } else if (external) {
            out.write_message(f.number, wire::retyped_tensor(f.payload, it->second->data_type, it->second->raw));
        } else {
            out.write_raw(f.encoded);
        }
    }

    void node(std::span<const std::byte> bytes, pb::ProtoWriter& out) {
        const std::vector<Field> fields = wire::split(bytes);
        const NodeView view = view_node(fields);
        const bool is_blocked = blocked(view);
        std::vector<std::string> inputs;
        for (std::size_t i = 0; i < view.inputs.size(); ++i) {
            std::string input = renamed(view.inputs[i]);
            if (!input.empty() && (is_blocked || always_float_input(view.op, i)) && is_fp16(view.inputs[i])) {
                const std::string cast = unique(input + ".fp32");
                out.write_message(wire::GraphField::node, wire::cast_node(node_name(cast), input, cast, DataType::float32));
                input = cast;
            }
            inputs.push_back(std::move(input));
        }
        std::vector<std::string> outputs;
        std::vector<std::pair<std::string, std::string>> back_casts;
        for (const auto& o : view.outputs) {
            std::string output = renamed(o);
            if (is_blocked && !output.empty() && type_of(types_, o) == DataType::float32) {
                const std::string fp32 = unique(output + ".fp32");
                back_casts.emplace_back(fp32, output);
                output = fp32;
            }
            outputs.push_back(std::move(output));
        }
        pb::ProtoWriter w;
        for (const auto& in : inputs) w.write_string(wire::NodeField::input, in);
        for (const auto& o : outputs) w.write_string(wire::NodeField::output, o);
        for (const Field& f : fields) {
            if (f.number == wire::NodeField::input || f.number == wire::NodeField::output) continue;
            if (f.number == wire::NodeField::attribute && !is_blocked) w.write_bytes(f.number, attribute(f.payload, view));
            else w.write_raw(f.encoded);
        }
        if (!is_blocked) add_missing_attributes(view, w);
        out.write_message(wire::GraphField::node, w);
        for (const auto& [from, to] : back_casts)
            out.write_message(wire::GraphField::node, wire::cast_node(node_name(to), from, to, low_));
    }

    // Attributes whose absence means float32.
    void add_missing_attributes(const NodeView& view, pb::ProtoWriter& w) const {
        if (view.domain.empty() && view.op == "ConstantOfShape" && !view.has_value_attribute) {
            const std::int64_t one = 1;
            const std::vector<std::byte> zero(2);
            wire::add_tensor_attribute(w, "value", wire::tensor("", low_, std::span(&one, 1), zero));
        }
        if (view.domain.empty() && (view.op == "RandomNormal" || view.op == "RandomUniform") && !view.has_dtype)
            wire::add_int_attribute(w, "dtype", static_cast<std::int64_t>(low_));
    }

    std::string attribute(std::span<const std::byte> bytes, const NodeView& view) {
        const std::vector<Field> fields = wire::split(bytes);
        const std::string name = wire::name_of(bytes, wire::AttributeField::name);
        const bool default_domain = view.domain.empty();
        if (default_domain && view.op == "Constant" && (name == "value_float" || name == "value_floats"))
            return constant_float_attribute(fields, name == "value_float");
        pb::ProtoWriter w;
        for (const Field& f : fields) {
            const bool float_type = f.type == pb::WireType::varint && f.varint == static_cast<std::uint64_t>(DataType::float32);
            if (f.number == wire::AttributeField::i && float_type && default_domain &&
                ((view.op == "Cast" && name == "to") || (has_dtype_attribute(view.op) && name == "dtype"))) {
                w.write_int64(f.number, static_cast<std::int64_t>(low_));
            } else if (f.number == wire::AttributeField::t) {
                w.write_bytes(f.number, tensor_attribute(f.payload));
            } else if (f.number == wire::AttributeField::g || f.number == wire::AttributeField::graphs) {
                w.write_bytes(f.number, graph(f.payload, false));
            } else {
                w.write_raw(f.encoded);
            }
        }
        return w.take();
    }

    std::string tensor_attribute(std::span<const std::byte> bytes) const {
        const OnnxTensor t = detail::parse_tensor(pb::ProtoReader(bytes));
        if (t.data_type != DataType::float32) return std::string(wire::as_text(bytes));
        if (t.external)
            throw UserError(fmt::format("{}: the tensor attribute '{}' keeps its data in an external file, which the "
                                        "float16 conversion does not read; save the model with its constants inline",
                                        source_, t.name));
        return wire::retyped_tensor(bytes, low_, low_bytes(t, low_)).take();
    }

    // Constant's value_float / value_floats (always float32) as a float16 `value` tensor.
    std::string constant_float_attribute(const std::vector<Field>& fields, bool scalar) const {
        std::vector<float> values;
        for (const Field& f : fields) {
            if (f.number != wire::AttributeField::f && f.number != wire::AttributeField::floats) continue;
            pb::ProtoReader r(f.encoded);
            r.next_field();
            if (f.number == wire::AttributeField::f) values.push_back(r.read_float());
            else r.read_repeated(values);
        }
        if (scalar && values.empty()) values.push_back(0.0F);
        const auto count = static_cast<std::int64_t>(values.size());
        const auto dims = scalar ? std::span<const std::int64_t>() : std::span<const std::int64_t>(&count, 1);
        pb::ProtoWriter w;
        w.write_string(wire::AttributeField::name, "value");
        w.write_message(wire::AttributeField::t, wire::tensor("", low_, dims, low_bytes(values, low_)));
        w.write_int64(wire::AttributeField::type, wire::kAttributeTensor);
        return w.take();
    }

    const Fp16Options& options_;
    DataType low_;
    ValueTypes types_;
    std::string source_;
    std::map<std::string, const OnnxTensor*, std::less<>> tensors_;
    std::map<std::string, Uses, std::less<>> float_initializers_;
    std::set<std::string, std::less<>> kept_fp32_;
    std::set<std::string, std::less<>> taken_;
    std::set<std::string, std::less<>> node_names_;
    std::map<std::string, std::string, std::less<>> rename_;
    std::vector<std::pair<std::string, std::string>> input_casts_;   // graph input -> its float16 cast
    std::vector<std::pair<std::string, std::string>> output_casts_;  // float16 value -> graph output
};

}  // namespace

std::set<std::string, std::less<>> Fp16Options::default_fp16_block_list() {
    return {std::begin(kDefaultBlockList), std::end(kDefaultBlockList)};
}

std::string convert_to_fp16(const std::filesystem::path& model_path, const Fp16Options& options) {
    if (options.low_type != DataType::float16 && options.low_type != DataType::bfloat16)
        throw std::invalid_argument("convert_to_fp16: low_type must be float16 or bfloat16");
    const OnnxModel model = read_onnx_file(model_path);
    const std::string bytes = read_regular_file(model_path);
    std::string converted;
    try {
        converted = Fp16Converter(model, options, model_path.string()).model(wire::as_bytes(bytes));
    } catch (const pb::DecodeError& e) {
        throw UserError(fmt::format("{}: not an ONNX model: {} at byte {}", model_path.string(), e.what(), e.offset()));
    }
    if (converted.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
        throw UserError(fmt::format("{}: the {} model would be {} bytes, over the 2 GiB one ONNX file can hold "
                                    "with its weights inline",
                                    model_path.string(), options.low_type == DataType::bfloat16 ? "bfloat16" : "float16",
                                    converted.size()));
    return converted;
}

std::uint16_t to_fp16_clamped(float value) {
    if (std::isnan(value)) return 0x7E00;
    const std::uint16_t sign = (std::bit_cast<std::uint32_t>(value) >> 16U) & 0x8000U;
    float a = std::fabs(value);
    constexpr float kMax = 65504.0F;
    constexpr float kMinSubnormal = 5.9604645e-08F;  // 2^-24
    constexpr float kMinNormal = 6.1035156e-05F;     // 2^-14
    if (a > kMax) a = kMax;
    if (a > 0.0F && a < kMinSubnormal) a = kMinSubnormal;
    if (a < kMinNormal) return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(a * 16777216.0F)));
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(a);
    const std::uint32_t mantissa = bits & 0x7FFFFFU;
    const std::uint32_t exponent = ((bits >> 23U) & 0xFFU) - 127U + 15U;
    std::uint32_t h = (exponent << 10U) | (mantissa >> 13U);
    const std::uint32_t rest = mantissa & 0x1FFFU;
    if (rest > 0x1000U || (rest == 0x1000U && (h & 1U) != 0)) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

float from_fp16(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16U;
    const std::uint32_t exponent = (bits >> 10U) & 0x1FU;
    const std::uint32_t mantissa = bits & 0x3FFU;
    if (exponent == 0) {
        const float v = static_cast<float>(mantissa) / 16777216.0F;
        return sign != 0 ? -v : v;
    }
    if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000U | (mantissa << 13U));
    return std::bit_cast<float>(sign | ((exponent - 15U + 127U) << 23U) | (mantissa << 13U));
}

std::uint16_t to_bf16(float value) {
    const std::uint32_t bits = std::bit_cast<std::uint32_t>(value);
    if (std::isnan(value)) return static_cast<std::uint16_t>((bits >> 16U) | 0x0040U);
    const std::uint32_t rounding = 0x7FFFU + ((bits >> 16U) & 1U);
    return static_cast<std::uint16_t>((bits + rounding) >> 16U);
}

float from_bf16(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16U); }

}  // namespace inferbench::models::onnx
