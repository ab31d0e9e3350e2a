// libFuzzer entry point for the sizes computed from shapes in files: the checked arithmetic (core/tensor_size),
// the batch rule every backend applies (backends/batch_shape) and the inspector's shape inference and cost model
// over a small graph whose input shape, op and op parameters come from the input. Each must give the exact size
// or a UserError; a wrong size, any other exception, a crash or a sanitizer report (a signed overflow) is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <vector>

#include "backends/batch_shape.hpp"
#include "core/error.hpp"
#include "core/tensor_size.hpp"
#include "models/cost_model.hpp"
#include "models/shape_inference.hpp"

namespace {

// Exact products for the reference (a GCC and clang extension).
__extension__ typedef __int128 Wide;

using inferbench::UserError;
namespace onnx = inferbench::models::onnx;

class Bytes {
public:
    explicit Bytes(std::span<const std::uint8_t> data) : data_(data) {}
    std::uint8_t byte() { return at_ < data_.size() ? data_[at_++] : 0; }
    std::int64_t number() {
        std::uint64_t value = 0;
        for (int k = 0; k < 8; ++k) value |= static_cast<std::uint64_t>(byte()) << (8 * k);
        return static_cast<std::int64_t>(value);
    }

private:
    std::span<const std::uint8_t> data_;
    std::size_t at_ = 0;
};

// The exact count in 128 bits (saturated above 2^64), -1 for a negative dimension.
Wide exact_count(const std::vector<std::int64_t>& shape) {
    for (const auto d : shape)
        if (d < 0) return -1;
    for (const auto d : shape)
        if (d == 0) return 0;
    const Wide beyond = static_cast<Wide>(1) << 64;
    Wide n = 1;
    for (const auto d : shape) n = n > beyond / d ? beyond : n * d;
    return n;
}

void check_sizes(const std::vector<std::int64_t>& shape, std::size_t element_size) {
    const Wide exact = exact_count(shape);
    const auto count = inferbench::checked_element_count(shape);
    const bool fits = exact >= 0 && exact <= INT64_MAX;
    if (count.has_value() != fits || (count && *count != static_cast<std::int64_t>(exact))) std::abort();
    const auto bytes = inferbench::checked_byte_size(shape, element_size);
    const bool fits_bytes = fits && exact * static_cast<Wide>(element_size) <= inferbench::kMaxTensorBytes;
    if (bytes.has_value() != fits_bytes || (bytes && *bytes != exact * static_cast<Wide>(element_size))) std::abort();
}

onnx::OnnxTensor int64_tensor(std::string name, const std::vector<std::int64_t>& values) {
    onnx::OnnxTensor t{std::move(name), onnx::DataType::int64, {static_cast<std::int64_t>(values.size())}, {}, {}, {}};
    t.raw.resize(values.size() * 8);
    if (!values.empty()) std::memcpy(t.raw.data(), values.data(), t.raw.size());
    return t;
}

// x (the fuzzed shape) -> one op of the fuzzed kind with fuzzed int64 parameters -> Relu.
onnx::OnnxModel graph(Bytes& in, const std::vector<std::int64_t>& shape) {
    static const char* const kOps[] = {"Relu", "Tile", "Reshape", "Expand", "Flatten", "MatMul", "Conv", "Softmax",
                                       "ReduceMean", "Gemm", "MaxPool", "Transpose"};
    onnx::OnnxModel model;
    model.opset_imports.push_back({"", 17});
    std::vector<onnx::OnnxDimension> dims;
    for (const auto d : shape) dims.emplace_back(d);
    model.graph.inputs.push_back({"x", onnx::DataType::float32, true, dims});
    std::vector<std::int64_t> values(in.byte() % 5);
    for (auto& v : values) v = in.number();
    model.graph.initializers.push_back(int64_tensor("p", values));
    std::vector<std::int64_t> weight_dims(in.byte() % 5);
    for (auto& d : weight_dims) d = in.byte() % 9;
    onnx::OnnxTensor w{"w", onnx::DataType::float32, weight_dims, {}, {}, {}};
    if (const auto count = inferbench::checked_element_count(weight_dims)) w.raw.resize(static_cast<std::size_t>(*count) * 4);
    model.graph.initializers.push_back(std::move(w));
    const std::string op = kOps[in.byte() % std::size(kOps)];
    onnx::OnnxNode node;
    node.op_type = op;
    node.name = "n";
    node.inputs = {"x", op == "MatMul" || op == "Conv" || op == "Gemm" ? "w" : "p"};
    node.outputs = {"o"};
    if (op == "Flatten" || op == "Softmax") node.attributes["axis"] = in.number() % 8;
    if (op == "MaxPool" || op == "Conv") node.attributes["kernel_shape"] = std::vector<std::int64_t>{in.number(), in.number()};
    if (op == "Conv" || op == "MaxPool") node.attributes["strides"] = std::vector<std::int64_t>{in.number() % 16, in.number() % 16};
    model.graph.nodes.push_back(node);
    model.graph.nodes.push_back({"r", "Relu", "", {"o"}, {"y"}, {}, {}});
    return model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    Bytes in(std::span(data, size));
    std::vector<std::int64_t> shape(in.byte() % 7);
    for (auto& d : shape) d = in.byte() % 2 == 0 ? in.number() : static_cast<std::int64_t>(in.byte());
    const std::size_t element_size = std::size_t{1} << (in.byte() % 4);
    check_sizes(shape, element_size);
    const std::int64_t batch = 1 + in.byte();
    try {
        const auto resolved = inferbench::resolve_batch_shape(shape, batch, "fuzz.onnx", "x");
        check_sizes(resolved, element_size);
        if (inferbench::byte_size_or_throw("x", resolved, element_size) > inferbench::kMaxTensorBytes) std::abort();
    } catch (const UserError&) {
    }
    try {
        const onnx::OnnxModel model = graph(in, shape);
        inferbench::models::ShapeInferenceOptions options;
        options.batch = batch;
        const auto shapes = inferbench::models::infer_shapes(model, options);
        const auto cost = inferbench::models::estimate_cost(model, shapes);
        if (cost.totals.flops < 0 || cost.totals.bytes_read < 0 || cost.totals.bytes_written < 0) std::abort();
    } catch (const UserError&) {
    }
    return 0;
}
