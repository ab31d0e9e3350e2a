// GraphBuilder's layer helpers: one ONNX node each, with seeded weights where the layer has any.
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "models/onnx_builder.hpp"

namespace inferbench::models {

namespace {

std::vector<std::int64_t> square(std::int64_t v) { return {v, v}; }

}  // namespace

std::string GraphBuilder::conv(std::string_view name, std::string_view x, std::int64_t in_channels,
                               std::int64_t out_channels, const ConvOptions& options) {
    if (options.group <= 0 || in_channels % options.group != 0 || out_channels % options.group != 0) {
        throw std::logic_error(fmt::format("conv '{}': {} -> {} channels do not split into {} groups", name,
                                           in_channels, out_channels, options.group));
    }
    const std::int64_t k = options.kernel;
    const std::int64_t fan_in = in_channels / options.group * k * k;
    const std::string weight = fmt::format("{}.weight", name);
    auto gen = generator_for(weight);
    add_initializer({weight,
                     {out_channels, in_channels / options.group, k, k},
                     he_uniform(gen, static_cast<std::size_t>(out_channels * fan_in), fan_in),
                     true});

    OnnxNode node{"Conv", std::string(name), {std::string(x), weight}, {std::string(name)}, {}};
    if (options.bias) {
        // torch.nn.Conv2d's default bias range: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
        const std::string bias = fmt::format("{}.bias", name);
        std::vector<float> values(static_cast<std::size_t>(out_channels));
        generator_for(bias).fill_symmetric(values, 1.0F / std::sqrt(static_cast<float>(fan_in)));
        add_initializer({bias, {out_channels}, std::move(values), true});
        node.inputs.push_back(bias);
    }
    node.attributes = {
        OnnxAttribute::of_ints("dilations", square(options.dilation)),
        OnnxAttribute::of_int("group", options.group),
        OnnxAttribute::of_ints("kernel_shape", square(k)),
        OnnxAttribute::of_ints("pads", {options.pad, options.pad, options.pad, options.pad}),
        OnnxAttribute::of_ints("strides", square(options.stride)),
    };
    add_node(std::move(node));
    return std::string(name);
}

std::string GraphBuilder::batch_norm(std::string_view name, std::string_view x, std::int64_t channels,
                                     float epsilon, float gamma) {
    // Jittered rather than exact identities, so no runtime can fold the layer away as a no-op,
    // yet close enough to (x - 0) / sqrt(1) * gamma + 0 that He-scaled activations keep their
    // size (times gamma).
    struct Stat {
        const char* suffix;
        float lo;
        float hi;
        bool is_parameter;
    };
    const Stat stats[] = {{"weight", 0.9F * gamma, 1.1F * gamma, true},
                          {"bias", -0.05F, 0.05F, true},
                          {"running_mean", -0.05F, 0.05F, false},
                          {"running_var", 0.9F, 1.1F, false}};
    OnnxNode node{"BatchNormalization", std::string(name), {std::string(x)}, {std::string(name)}, {}};
    for (const Stat& stat : stats) {
        const std::string tensor = fmt::format("{}.{}", name, stat.suffix);
        std::vector<float> values(static_cast<std::size_t>(channels));
        generator_for(tensor).fill_uniform(values, stat.lo, stat.hi);
        add_initializer({tensor, {channels}, std::move(values), stat.is_parameter});
        node.inputs.push_back(tensor);
    }
    node.attributes = {OnnxAttribute::of_float("epsilon", epsilon)};
    add_node(std::move(node));
    return std::string(name);
}

std::string GraphBuilder::relu(std::string_view name, std::string_view x) {
    add_node({"Relu", std::string(name), {std::string(x)}, {std::string(name)}, {}});
    return std::string(name);
}

std::string GraphBuilder::scalar_constant(float value) {
    std::string tensor = fmt::format("const.{}", value);
    if (!initializer_names_.contains(tensor)) {
        add_initializer({tensor, {}, {value}, false});
    }
    return tensor;
}

std::string GraphBuilder::clip(std::string_view name, std::string_view x, float lo, float hi) {
    add_node({"Clip",
              std::string(name),
              {std::string(x), scalar_constant(lo), scalar_constant(hi)},
              {std::string(name)},
              {}});
    return std::string(name);
}

std::string GraphBuilder::add(std::string_view name, std::string_view a, std::string_view b) {
    add_node({"Add", std::string(name), {std::string(a), std::string(b)}, {std::string(name)}, {}});
    return std::string(name);
}

std::string GraphBuilder::max_pool(std::string_view name, std::string_view x, std::int64_t kernel,
                                   std::int64_t stride, std::int64_t pad) {
    add_node({"MaxPool",
              std::string(name),
              {std::string(x)},
              {std::string(name)},
              {OnnxAttribute::of_ints("kernel_shape", square(kernel)),
               OnnxAttribute::of_ints("pads", {pad, pad, pad, pad}),
               OnnxAttribute::of_ints("strides", square(stride))}});
    return std::string(name);
}

std::string GraphBuilder::global_avg_pool(std::string_view name, std::string_view x) {
    add_node({"GlobalAveragePool", std::string(name), {std::string(x)}, {std::string(name)}, {}});
    return std::string(name);
}

std::string GraphBuilder::flatten(std::string_view name, std::string_view x, std::int64_t axis) {
    add_node({"Flatten",
              std::string(name),
              {std::string(x)},
              {std::string(name)},
              {OnnxAttribute::of_int("axis", axis)}});
    return std::string(name);
}

std::string GraphBuilder::gemm(std::string_view name, std::string_view x, std::int64_t in_features,
                               std::int64_t out_features) {
    // No ReLU follows a classifier, so LeCun-uniform (variance 1/fan_in), not He (2/fan_in).
    const float bound = std::sqrt(3.0F / static_cast<float>(in_features));
    const std::string weight = fmt::format("{}.weight", name);
    const std::string bias = fmt::format("{}.bias", name);
    std::vector<float> w(static_cast<std::size_t>(out_features * in_features));
    generator_for(weight).fill_symmetric(w, bound);
    std::vector<float> b(static_cast<std::size_t>(out_features));
    generator_for(bias).fill_symmetric(b, 1.0F / std::sqrt(static_cast<float>(in_features)));
    add_initializer({weight, {out_features, in_features}, std::move(w), true});
    add_initializer({bias, {out_features}, std::move(b), true});
    add_node({"Gemm",
              std::string(name),
              {std::string(x), weight, bias},
              {std::string(name)},
              {OnnxAttribute::of_float("alpha", 1.0F), OnnxAttribute::of_float("beta", 1.0F),
               OnnxAttribute::of_int("transB", 1)}});
    return std::string(name);
}

std::string GraphBuilder::softmax(std::string_view name, std::string_view x, std::int64_t axis) {
    add_node({"Softmax",
              std::string(name),
              {std::string(x)},
              {std::string(name)},
              {OnnxAttribute::of_int("axis", axis)}});
    return std::string(name);
}

}  // namespace inferbench::models
