// NodeContext, the operator registry and the helpers the operator files share.
#include "backends/torch/onnx_interpreter/onnx_kernels.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <map>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

namespace inferbench::torch_onnx {

namespace {

template <typename T>
std::string_view kind_name() {
    if constexpr (std::is_same_v<T, std::int64_t>) {
        return "an int";
    } else if constexpr (std::is_same_v<T, float>) {
        return "a float";
    } else if constexpr (std::is_same_v<T, std::string>) {
        return "a string";
    } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
        return "a list of ints";
    } else {
        return "a tensor";
    }
}

const std::map<std::string_view, KernelFactory>& registry() {
    static const std::map<std::string_view, KernelFactory> table = [] {
        std::map<std::string_view, KernelFactory> all;
        for (const auto entries : {nn_kernels(), math_kernels(), shape_kernels(), index_kernels(), detection_kernels()}) {
            for (const KernelEntry& e : entries) all.emplace(e.op_type, e.factory);
        }
        return all;
    }();
    return table;
}

// One lookup for every attribute kind: the value, the fallback, or a load-time error.
template <typename T>
T attribute_or(const NodeContext& ctx, const onnx::OnnxAttributeValue* value, std::string_view name,
               std::optional<T> fallback) {
    if (value == nullptr) {
        if (!fallback) ctx.fail(fmt::format("attribute '{}' is missing", name));
        return std::move(*fallback);
    }
    const T* typed = std::get_if<T>(value);
    if (typed == nullptr) ctx.fail(fmt::format("attribute '{}' should be {}", name, kind_name<T>()));
    return *typed;
}

}  // namespace

NodeContext::NodeContext(const onnx::OnnxNode& node, std::int64_t opset, std::vector<const torch::Tensor*> constants,
                         std::string_view source)
    : node_(node),
      opset_(opset),
      constants_(std::move(constants)),
      where_(fmt::format("{}: node '{}' ({})", source, node.name, node.op_type)) {}

void NodeContext::fail(std::string_view what) const { throw UserError(fmt::format("{}: {}", where_, what)); }

void NodeContext::expect_inputs(std::size_t required, std::size_t allowed) const {
    if (node_.inputs.size() > allowed)
        fail(fmt::format("has {} inputs, at most {} expected", node_.inputs.size(), allowed));
    for (std::size_t i = 0; i < required; ++i) {
        if (!has_input(i)) fail(fmt::format("input {} is missing", i));
    }
}

void NodeContext::expect_outputs(std::size_t supported) const {
    for (std::size_t i = supported; i < node_.outputs.size(); ++i) {
        if (has_output(i)) fail(fmt::format("output {} ('{}') is not supported", i, node_.outputs[i]));
    }
}

const onnx::OnnxAttributeValue* NodeContext::find(std::string_view name) const {
    const auto it = node_.attributes.find(name);
    return it == node_.attributes.end() ? nullptr : &it->second;
}

bool NodeContext::has_attribute(std::string_view name) const { return find(name) != nullptr; }

std::int64_t NodeContext::int_attribute(std::string_view name, std::optional<std::int64_t> fallback) const {
    return attribute_or(*this, find(name), name, fallback);
}

float NodeContext::float_attribute(std::string_view name, std::optional<float> fallback) const {
    return attribute_or(*this, find(name), name, fallback);
}

std::string NodeContext::string_attribute(std::string_view name, std::optional<std::string> fallback) const {
    return attribute_or(*this, find(name), name, std::move(fallback));
}

std::vector<std::int64_t> NodeContext::ints_attribute(std::string_view name,
                                                      std::optional<std::vector<std::int64_t>> fallback) const {
    return attribute_or(*this, find(name), name, std::move(fallback));
}

const onnx::OnnxTensor& NodeContext::tensor_attribute(std::string_view name) const {
    const auto* value = find(name);
    const auto* tensor = value == nullptr ? nullptr : std::get_if<onnx::OnnxTensor>(value);
    if (tensor == nullptr) fail(fmt::format("attribute '{}' should be {}", name, kind_name<onnx::OnnxTensor>()));
    return *tensor;
}

KernelFactory find_kernel_factory(std::string_view op_type) {
    const auto it = registry().find(op_type);
    return it == registry().end() ? nullptr : it->second;
}

std::vector<std::string> supported_operators() {
    std::vector<std::string> names;
    for (const auto& [name, factory] : registry()) names.emplace_back(name);
    names.emplace_back("If");  // the loader's own (onnx_branches.hpp), for it reads subgraphs
    std::ranges::sort(names);
    return names;
}

IntListInput::IntListInput(const NodeContext& ctx, std::size_t index) : present_(ctx.has_input(index)), index_(index) {
    if (const torch::Tensor* value = ctx.constant(index)) constant_ = to_int64s(*value);
}

std::vector<std::int64_t> IntListInput::get(std::span<const torch::Tensor> in) const {
    if (constant_) return *constant_;
    return present_ ? to_int64s(in[index_]) : std::vector<std::int64_t>{};
}

std::vector<std::int64_t> to_int64s(const torch::Tensor& t) {
    const torch::Tensor values = t.to(torch::kCPU, torch::kLong).contiguous();
    const auto* data = values.data_ptr<std::int64_t>();
    return {data, data + values.numel()};
}

std::optional<std::vector<std::int64_t>> dense_order(const torch::Tensor& x) {
    if (x.dim() < 3 || x.stride(-1) != 1 || x.is_contiguous()) return std::nullopt;
    std::vector<std::int64_t> order(static_cast<std::size_t>(x.dim() - 1));
    std::iota(order.begin(), order.end(), 0);
    std::ranges::stable_sort(order, [&](std::int64_t a, std::int64_t b) { return x.stride(a) > x.stride(b); });
    order.push_back(x.dim() - 1);
    if (!x.permute(order).is_contiguous()) return std::nullopt;
    return order;
}

std::vector<std::int64_t> inverse_permutation(const std::vector<std::int64_t>& order) {
    std::vector<std::int64_t> inverse(order.size());
    for (std::size_t k = 0; k < order.size(); ++k) inverse[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
    return inverse;
}

void check_shape(c10::IntArrayRef shape, std::string_view what) {
    std::int64_t count = 1;
    for (const std::int64_t d : shape) {
        if (d < 0) throw std::invalid_argument(fmt::format("{}: dimension {} is negative", what, d));
        if (d > 0 && count > kMaxShapeElements / d) {
            throw std::invalid_argument(fmt::format("{}: shape [{}] has more than {} elements", what,
                                                    fmt::join(shape, ", "), kMaxShapeElements));
        }
        count *= d;
    }
}

std::int64_t normalize_axis(std::int64_t axis, std::int64_t rank) {
    if (axis < -rank || axis >= rank) {
        throw std::out_of_range(fmt::format("axis {} is out of range for rank {}", axis, rank));
    }
    return axis < 0 ? axis + rank : axis;
}

std::vector<torch::Tensor> on_common_device(std::span<const torch::Tensor> tensors) {
    std::vector<torch::Tensor> out(tensors.begin(), tensors.end());
    const auto on_device = std::ranges::find_if(out, [](const torch::Tensor& t) { return t.defined() && !t.is_cpu(); });
    if (on_device == out.end()) return out;
    const torch::Device device = on_device->device();
    for (torch::Tensor& t : out) {
        if (t.defined() && t.device() != device) t = t.to(device);
    }
    return out;
}

std::optional<torch::ScalarType> scalar_type_of(onnx::DataType type) {
    using onnx::DataType;
    switch (type) {
        case DataType::float32:
            return torch::kFloat;
        case DataType::uint8:
            return torch::kByte;
        case DataType::int8:
            return torch::kChar;
        case DataType::int16:
            return torch::kShort;
        case DataType::int32:
            return torch::kInt;
        case DataType::int64:
            return torch::kLong;
        case DataType::boolean:
            return torch::kBool;
        case DataType::float16:
            return torch::kHalf;
        case DataType::float64:
            return torch::kDouble;
        case DataType::bfloat16:
            return torch::kBFloat16;
        case DataType::complex64:
            return torch::kComplexFloat;
        case DataType::complex128:
            return torch::kComplexDouble;
        default:
            return std::nullopt;  // unsigned 16-64 bit, strings, 8- and 4-bit floats: none in LibTorch 1.13
    }
}

torch::ScalarType to_scalar_type(onnx::DataType type, torch::ScalarType float_type) {
    const auto scalar = scalar_type_of(type);
    if (!scalar)
        throw std::invalid_argument(fmt::format("element type {} has no LibTorch equivalent", to_string(type)));
    return torch::isFloatingType(*scalar) ? float_type : *scalar;
}

torch::Tensor to_torch(const onnx::OnnxTensor& tensor, std::string_view where) {
    const auto scalar = scalar_type_of(tensor.data_type);
    if (!scalar) {
        throw UserError(fmt::format("{}: tensor '{}' has element type {}, which LibTorch lacks", where, tensor.name,
                                    to_string(tensor.data_type)));
    }
    // The reader guarantees raw holds exactly dims' elements, little-endian, as this host stores them.
    static_assert(std::endian::native == std::endian::little, "tensor bytes are copied as they are");
    torch::Tensor t = torch::empty(tensor.dims, torch::TensorOptions().dtype(*scalar));
    if (!tensor.raw.empty()) std::memcpy(t.data_ptr(), tensor.raw.data(), tensor.raw.size());
    return t;
}

}  // namespace inferbench::torch_onnx
