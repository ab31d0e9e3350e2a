// Builds ONNX models in memory and writes them as ModelProto bytes, without libprotobuf.
// Field numbers follow onnx/onnx.proto (checked against ONNX 1.12's copy); repeated scalars are
// written unpacked, as onnx.proto is proto2 and ONNX's own serializer does.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "models/weight_generator.hpp"

namespace inferbench::models {

inline constexpr std::int64_t kOnnxIrVersion = 8;
inline constexpr std::int64_t kOnnxOpsetVersion = 13;
inline constexpr std::string_view kOnnxProducerName = "inferbench";

// TensorProto.DataType values; only what the zoo writes. Kept here rather than reusing
// inferbench::DType so that the models module's file format does not follow the backends'.
enum class OnnxElemType : std::int32_t { float32 = 1, int64 = 7, float16 = 10 };

// One dimension of a graph input or output: a fixed size, or a named symbol such as "batch".
struct OnnxDim {
    std::int64_t value = 0;
    std::string param;  // non-empty: symbolic, `value` unused

    static OnnxDim fixed(std::int64_t v) { return OnnxDim{v, {}}; }
    static OnnxDim symbolic(std::string name) { return OnnxDim{0, std::move(name)}; }
};

struct OnnxAttribute {
    // AttributeProto.AttributeType values.
    enum class Type : std::int32_t { float_value = 1, int_value = 2, string_value = 3, floats = 6, ints = 7 };

    std::string name;
    Type type = Type::int_value;
    float f = 0.0F;
    std::int64_t i = 0;
    std::string s{};
    std::vector<float> floats{};
    std::vector<std::int64_t> ints{};

    static OnnxAttribute of_float(std::string name, float v);
    static OnnxAttribute of_int(std::string name, std::int64_t v);
    static OnnxAttribute of_string(std::string name, std::string v);
    static OnnxAttribute of_floats(std::string name, std::vector<float> v);
    static OnnxAttribute of_ints(std::string name, std::vector<std::int64_t> v);
};

struct OnnxNode {
    std::string op_type;
    std::string name;
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::vector<OnnxAttribute> attributes;
};

struct OnnxInitializer {
    std::string name;
    std::vector<std::int64_t> dims;  // empty: a scalar
    std::vector<float> data;
    // Trainable weight (counted by parameter_count()), as opposed to a BN running statistic or
    // a constant such as Clip's bounds.
    bool is_parameter = true;
    // float16: the values are rounded to IEEE halves as they are written.
    OnnxElemType elem_type = OnnxElemType::float32;
    // Set (with `data` empty): the values are made when the model is written, one tensor at a time, so
    // that a model of billions of parameters never holds them all in memory.
    std::function<void(std::span<float>)> fill = {};

    std::int64_t element_count() const;
};

// Where GraphBuilder::write() puts the data of large initializers (ONNX's external data, needed above
// protobuf's 2 GB message limit): the file `location`, beside the model, whose bytes go to `out`.
struct OnnxExternalData {
    std::ostream* out = nullptr;
    std::string location;
    // Initializers of at least this many bytes go to the file; smaller ones stay in the model.
    std::size_t threshold_bytes = 1024;
};

struct OnnxValueInfo {
    std::string name;
    OnnxElemType elem_type = OnnxElemType::float32;
    std::vector<OnnxDim> dims;
};

struct ConvOptions {
    std::int64_t kernel = 1;
    std::int64_t stride = 1;
    std::int64_t pad = 0;  // on every side
    std::int64_t group = 1;
    std::int64_t dilation = 1;
    bool bias = false;
};

class GraphBuilder {
public:
    // `seed` drives every weight the layer helpers create (see tensor_seed()).
    GraphBuilder(std::string graph_name, std::uint64_t seed);

    void add_input(std::string name, OnnxElemType type, std::vector<OnnxDim> dims);
    void add_output(std::string name, OnnxElemType type, std::vector<OnnxDim> dims);
    // Throws std::logic_error if the name is taken or the data does not match the dims.
    void add_initializer(OnnxInitializer initializer);
    void add_node(OnnxNode node);
    // Renames a value wherever nodes produce or consume it (e.g. the last layer's to "logits").
    void rename_value(std::string_view from, const std::string& to);
    // Replaces the symbolic dimension `symbol` by `value` wherever the graph declares a shape: its
    // inputs and outputs (the builder writes no value_info). Returns how many dimensions changed.
    std::size_t bind_dimension(std::string_view symbol, std::int64_t value);

    void set_doc_string(std::string text) { doc_string_ = std::move(text); }
    void set_producer_version(std::string version) { producer_version_ = std::move(version); }
    // The default-domain opset the model imports: kOnnxOpsetVersion unless a model needs newer ops
    // (BERT's LayerNormalization is opset 17).
    void set_opset_version(std::int64_t version) { opset_version_ = version; }
    std::int64_t opset_version() const { return opset_version_; }
    void add_metadata(std::string key, std::string value);

    // A generator for the tensor called `tensor_name`, seeded from the model seed and the name.
    WeightGenerator generator_for(std::string_view tensor_name) const;

    // Layer helpers. Each adds one node called `name` whose output value is also `name`; weights
    // are `name.weight`, `name.bias`, ...; each returns the output value's name.
    std::string conv(std::string_view name, std::string_view x, std::int64_t in_channels,
                     std::int64_t out_channels, const ConvOptions& options);
    // Inference-mode BatchNormalization: scale ~ gamma, beta ~ 0, mean ~ 0, var ~ 1, all jittered
    // by +-10% (of gamma and var) or +-0.05 (beta and mean).
    std::string batch_norm(std::string_view name, std::string_view x, std::int64_t channels,
                           float epsilon = 1e-5F, float gamma = 1.0F);
    std::string relu(std::string_view name, std::string_view x);
    // Opset-13 Clip: the bounds are inputs (shared scalar initializers), not attributes.
    std::string clip(std::string_view name, std::string_view x, float lo, float hi);
    std::string relu6(std::string_view name, std::string_view x) { return clip(name, x, 0.0F, 6.0F); }
    std::string add(std::string_view name, std::string_view a, std::string_view b);
    std::string max_pool(std::string_view name, std::string_view x, std::int64_t kernel, std::int64_t stride,
                         std::int64_t pad);
    std::string global_avg_pool(std::string_view name, std::string_view x);
    std::string flatten(std::string_view name, std::string_view x, std::int64_t axis = 1);
    // y = x W^T + b with W stored [out_features, in_features] (transB = 1), as torch.nn.Linear.
    std::string gemm(std::string_view name, std::string_view x, std::int64_t in_features,
                     std::int64_t out_features);
    std::string softmax(std::string_view name, std::string_view x, std::int64_t axis = 1);

    // Elements of all initializers marked is_parameter.
    std::int64_t parameter_count() const;

    const std::string& graph_name() const { return graph_name_; }
    const std::vector<OnnxNode>& nodes() const { return nodes_; }
    const std::vector<OnnxInitializer>& initializers() const { return initializers_; }
    const std::vector<OnnxValueInfo>& inputs() const { return inputs_; }
    const std::vector<OnnxValueInfo>& outputs() const { return outputs_; }

    // Writes the ModelProto. Tensor data is streamed from the initializers, never copied whole; with
    // `external`, the large initializers' data goes to its file, each tensor at a 64-byte-aligned offset.
    void write(std::ostream& out, const OnnxExternalData* external = nullptr) const;
    std::string serialize() const;

private:
    std::string scalar_constant(float value);

    std::string graph_name_;
    std::uint64_t seed_;
    std::int64_t opset_version_ = kOnnxOpsetVersion;
    std::string producer_version_;
    std::string doc_string_;
    std::vector<std::pair<std::string, std::string>> metadata_;
    std::vector<OnnxValueInfo> inputs_;
    std::vector<OnnxValueInfo> outputs_;
    std::vector<OnnxInitializer> initializers_;
    std::unordered_set<std::string> initializer_names_;
    std::vector<OnnxNode> nodes_;
};

}  // namespace inferbench::models
