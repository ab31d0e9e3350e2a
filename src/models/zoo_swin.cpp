// Swin Transformer (Liu et al. 2021, arXiv:2103.14030) image classifiers, 224x224, patch 4,
// window 7, as timm's swin_{tiny,small,base,large}_patch4_window7_224 (names follow timm >= 0.9's
// state_dict: "layers.1.downsample.reduction.weight", "layers.0.blocks.1.attn.qkv.weight"), with
// Linear weights stored [in, out] for MatMul as torch.onnx exports them.
//
// Activations stay [batch, H, W, C] between blocks, so LayerNorm and the MLP's MatMuls apply
// directly; the cyclic shift is Slice + Concat (torch.roll), window partition and reverse are
// Reshape + Transpose, patch merging is strided Slice + Concat. The relative position bias table is
// a parameter; its index and the shifted windows' attention mask are constants (timm buffers).
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "models/zoo_builders.hpp"
#include "models/zoo_graph_ops.hpp"

namespace inferbench::models {

namespace {

using graph_ops::int64_constant;
using graph_ops::op;

constexpr std::int64_t kOpsetWithLayerNorm = 17;
constexpr float kLayerNormEpsilon = 1e-5F;
constexpr float kInitStd = 0.02F;        // timm's trunc_normal_(std=.02) for Linear and the bias table
constexpr float kMaskedScore = -100.0F;  // timm's value for pairs from different shifted regions
constexpr std::int64_t kMlpRatio = 4;

// Uniform with standard deviation kInitStd (bound std * sqrt(3)).
std::string weight(GraphBuilder& g, const std::string& name, std::vector<std::int64_t> dims) {
    std::int64_t count = 1;
    for (const std::int64_t d : dims) count *= d;
    std::vector<float> values(static_cast<std::size_t>(count));
    g.generator_for(name).fill_symmetric(values, kInitStd * std::sqrt(3.0F));
    g.add_initializer({name, std::move(dims), std::move(values), true});
    return name;
}

// x W (+ b). timm starts biases at 0; random ones keep a runtime from dropping the Add.
std::string linear(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t in, std::int64_t out,
                   bool bias = true) {
    const std::string product =
        op(g, "MatMul", bias ? name + ".MatMul" : name, {x, weight(g, name + ".weight", {in, out})});
    return bias ? op(g, "Add", name, {product, weight(g, name + ".bias", {out})}) : product;
}

std::string layer_norm(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t channels) {
    const auto n = static_cast<std::size_t>(channels);
    g.add_initializer({name + ".weight", {channels}, std::vector<float>(n, 1.0F), true});
    g.add_initializer({name + ".bias", {channels}, std::vector<float>(n, 0.0F), true});
    return op(g, "LayerNormalization", name, {x, name + ".weight", name + ".bias"},
              {OnnxAttribute::of_int("axis", -1), OnnxAttribute::of_float("epsilon", kLayerNormEpsilon)});
}

// x * 0.5 * (1 + erf(x / sqrt(2))), torch.onnx's Gelu before opset 20 (ONNX Runtime fuses it).
std::string gelu(GraphBuilder& g, const std::string& name, const std::string& x) {
    const std::string sqrt2 = graph_ops::float_constant(g, "const.sqrt2", {}, {static_cast<float>(std::sqrt(2.0))});
    const std::string one = graph_ops::float_constant(g, "const.one", {}, {1.0F});
    const std::string half = graph_ops::float_constant(g, "const.half", {}, {0.5F});
    const std::string erf = op(g, "Erf", name + ".Erf", {op(g, "Div", name + ".Div", {x, sqrt2})});
    return op(g, "Mul", name, {op(g, "Mul", name + ".Mul", {x, op(g, "Add", name + ".Add", {erf, one})}), half});
}

std::string slice(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t start, std::int64_t end,
                  std::int64_t axis, std::int64_t step = 1) {
    return op(g, "Slice", name,
              {x, int64_constant(g, name + ".starts", {start}), int64_constant(g, name + ".ends", {end}),
               int64_constant(g, name + ".axes", {axis}), int64_constant(g, name + ".steps", {step})});
}

std::string reshape(GraphBuilder& g, const std::string& name, const std::string& x, std::vector<std::int64_t> shape) {
    return op(g, "Reshape", name, {x, int64_constant(g, name + ".shape", std::move(shape))});
}

std::string transpose(GraphBuilder& g, const std::string& name, const std::string& x, std::vector<std::int64_t> perm) {
    return op(g, "Transpose", name, {x}, {OnnxAttribute::of_ints("perm", std::move(perm))});
}

// torch.roll(x, (shift, shift), (1, 2)) on [batch, size, size, C], shift in (-size, size).
std::string roll(GraphBuilder& g, const std::string& name, const std::string& x, std::int64_t size,
                 std::int64_t shift) {
    const std::int64_t cut = shift < 0 ? -shift : size - shift;  // the first row of the result
    std::string y = x;
    for (const std::int64_t axis : {1, 2}) {
        const std::string p = fmt::format("{}.axis{}", name, axis);
        y = graph_ops::concat(g, p, {slice(g, p + ".tail", y, cut, size, axis), slice(g, p + ".head", y, 0, cut, axis)},
                              axis);
    }
    return y;
}

// timm's relative_position_index for a window x window window, flattened (window^4 entries).
std::vector<std::int64_t> relative_position_index(std::int64_t window) {
    std::vector<std::int64_t> index;
    const std::int64_t tokens = window * window;
    for (std::int64_t i = 0; i < tokens; ++i) {
        for (std::int64_t j = 0; j < tokens; ++j) {
            const std::int64_t dh = i / window - j / window + window - 1;
            const std::int64_t dw = i % window - j % window + window - 1;
            index.push_back(dh * (2 * window - 1) + dw);
        }
    }
    return index;
}

// timm's attn_mask for shifted windows: [windows, 1, tokens, tokens], 0 within a region, -100 across.
std::vector<float> shifted_window_mask(std::int64_t size, std::int64_t window, std::int64_t shift) {
    const auto region = [&](std::int64_t v) { return v < size - window ? 0 : (v < size - shift ? 1 : 2); };
    const std::int64_t per_side = size / window;
    const std::int64_t tokens = window * window;
    std::vector<float> mask;
    for (std::int64_t w = 0; w < per_side * per_side; ++w) {
        const auto id = [&](std::int64_t t) {
            return region(w / per_side * window + t / window) * 3 + region(w % per_side * window + t % window);
        };
        for (std::int64_t i = 0; i < tokens; ++i) {
            for (std::int64_t j = 0; j < tokens; ++j) mask.push_back(id(i) == id(j) ? 0.0F : kMaskedScore);
        }
    }
    return mask;
}

struct BlockShape {
    std::int64_t size;  // H = W of the stage
    std::int64_t dim;
    std::int64_t heads;
    std::int64_t window;
    std::int64_t shift;  // 0: regular windows
};

// Window multi-head self-attention on [windows * batch, tokens, dim] -> same shape.
std::string window_attention(GraphBuilder& g, const std::string& p, const std::string& x, const BlockShape& b) {
    const std::int64_t tokens = b.window * b.window;
    const std::int64_t head_dim = b.dim / b.heads;
    const std::string qkv = linear(g, p + ".qkv", x, b.dim, 3 * b.dim);
    g.add_node({"Split", p + ".qkv.Split", {qkv}, {p + ".q", p + ".k", p + ".v"}, {OnnxAttribute::of_int("axis", -1)}});
    const auto heads = [&](const std::string& v, std::vector<std::int64_t> perm) {
        return transpose(g, v + ".Transpose", reshape(g, v + ".Reshape", v, {-1, tokens, b.heads, head_dim}),
                         std::move(perm));
    };
    const std::string scale =
        graph_ops::float_constant(g, fmt::format("const.scale_{}", head_dim), {},
                                  {static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim)))});
    const std::string q = op(g, "Mul", p + ".q.scaled", {heads(p + ".q", {0, 2, 1, 3}), scale});
    std::string scores = op(g, "MatMul", p + ".scores", {q, heads(p + ".k", {0, 2, 3, 1})});

    const std::int64_t table_rows = (2 * b.window - 1) * (2 * b.window - 1);
    const std::string table = weight(g, p + ".relative_position_bias_table", {table_rows, b.heads});
    std::string bias =
        op(g, "Gather", p + ".relative_position_bias",
           {table, int64_constant(g, p + ".relative_position_index", relative_position_index(b.window))});
    bias = transpose(g, p + ".relative_position_bias.Transpose",
                     reshape(g, p + ".relative_position_bias.Reshape", bias, {tokens, tokens, b.heads}), {2, 0, 1});
    scores = op(g, "Add", p + ".scores.biased", {scores, bias});
    if (b.shift > 0) {
        const std::int64_t windows = (b.size / b.window) * (b.size / b.window);
        const std::string mask =
            graph_ops::float_constant(g, fmt::format("const.attn_mask_{}", b.size), {windows, 1, tokens, tokens},
                                      shifted_window_mask(b.size, b.window, b.shift));
        scores = reshape(g, p + ".scores.per_image", scores, {-1, windows, b.heads, tokens, tokens});
        scores = op(g, "Add", p + ".scores.masked", {scores, mask});
        scores = reshape(g, p + ".scores.per_window", scores, {-1, b.heads, tokens, tokens});
    }
    const std::string probs = op(g, "Softmax", p + ".Softmax", {scores}, {OnnxAttribute::of_int("axis", -1)});
    std::string context = op(g, "MatMul", p + ".context", {probs, heads(p + ".v", {0, 2, 1, 3})});
    context = reshape(g, p + ".context.Reshape", transpose(g, p + ".context.Transpose", context, {0, 2, 1, 3}),
                      {-1, tokens, b.dim});
    return linear(g, p + ".proj", context, b.dim, b.dim);
}

// Pre-norm block on [batch, H, W, dim]: x + W-MSA(LN(x)) (shifted when b.shift > 0), then x + MLP(LN(x)).
std::string swin_block(GraphBuilder& g, const std::string& p, const std::string& x, const BlockShape& b) {
    const std::int64_t per_side = b.size / b.window;
    std::string y = layer_norm(g, p + ".norm1", x, b.dim);
    if (b.shift > 0) y = roll(g, p + ".shift", y, b.size, -b.shift);
    y = reshape(g, p + ".partition.Reshape", y, {-1, per_side, b.window, per_side, b.window, b.dim});
    y = transpose(g, p + ".partition.Transpose", y, {0, 1, 3, 2, 4, 5});
    y = reshape(g, p + ".partition", y, {-1, b.window * b.window, b.dim});
    y = window_attention(g, p + ".attn", y, b);
    y = reshape(g, p + ".reverse.Reshape", y, {-1, per_side, per_side, b.window, b.window, b.dim});
    y = transpose(g, p + ".reverse.Transpose", y, {0, 1, 3, 2, 4, 5});
    y = reshape(g, p + ".reverse", y, {-1, b.size, b.size, b.dim});
    if (b.shift > 0) y = roll(g, p + ".unshift", y, b.size, b.shift);
    const std::string mid = g.add(p + ".residual1", x, y);

    y = layer_norm(g, p + ".norm2", mid, b.dim);
    y = gelu(g, p + ".mlp.act", linear(g, p + ".mlp.fc1", y, b.dim, kMlpRatio * b.dim));
    y = linear(g, p + ".mlp.fc2", y, kMlpRatio * b.dim, b.dim);
    return g.add(p + ".residual2", mid, y);
}

// [batch, H, W, C] -> [batch, H/2, W/2, 2C]: the 2x2 neighbours concatenated in timm's order
// (x[0::2, 0::2], x[1::2, 0::2], x[0::2, 1::2], x[1::2, 1::2]), LayerNorm, Linear without bias.
std::string patch_merging(GraphBuilder& g, const std::string& p, const std::string& x, std::int64_t size,
                          std::int64_t dim) {
    std::vector<std::string> parts;
    for (const auto& [w0, h0] : {std::pair{0, 0}, {0, 1}, {1, 0}, {1, 1}}) {
        const std::string name = fmt::format("{}.x{}{}", p, h0, w0);
        parts.push_back(slice(g, name + ".w", slice(g, name + ".h", x, h0, size, 1, 2), w0, size, 2, 2));
    }
    const std::string merged = graph_ops::concat(g, p + ".concat", parts, -1);
    return linear(g, p + ".reduction", layer_norm(g, p + ".norm", merged, 4 * dim), 4 * dim, 2 * dim, false);
}

void check(const SwinConfig& c) {
    std::int64_t size = c.image_size / c.patch_size;
    for (std::size_t s = 0; s < c.depths.size(); ++s, size /= 2) {
        const std::int64_t dim = c.embed_dim << s;
        if (c.heads[s] <= 0 || dim % c.heads[s] != 0 || size % c.window != 0 || size < c.window) {
            throw std::logic_error(fmt::format("swin: stage {} ({} px, dim {}, {} heads) does not fit window {}", s,
                                               size, dim, c.heads[s], c.window));
        }
    }
}

}  // namespace

GraphBuilder build_swin(const SwinConfig& c, std::uint64_t seed) {
    check(c);
    GraphBuilder g("swin", seed);
    g.set_opset_version(kOpsetWithLayerNorm);
    const auto batch = OnnxDim::symbolic(std::string(kBatchDimName));
    const auto fixed = [](std::int64_t v) { return OnnxDim::fixed(v); };
    g.add_input("input", OnnxElemType::float32, {batch, fixed(3), fixed(c.image_size), fixed(c.image_size)});

    std::string x = g.conv("patch_embed.proj", "input", 3, c.embed_dim,
                           {.kernel = c.patch_size, .stride = c.patch_size, .bias = true});
    x = layer_norm(g, "patch_embed.norm", transpose(g, "patch_embed.nhwc", x, {0, 2, 3, 1}), c.embed_dim);

    std::int64_t size = c.image_size / c.patch_size;
    std::int64_t dim = c.embed_dim;
    for (std::size_t s = 0; s < c.depths.size(); ++s) {
        if (s > 0) {
            x = patch_merging(g, fmt::format("layers.{}.downsample", s), x, size, dim);
            size /= 2;
            dim *= 2;
        }
        // Where the stage is one window, timm neither shifts nor masks.
        const std::int64_t shift = size > c.window ? c.window / 2 : 0;
        for (std::int64_t i = 0; i < c.depths[s]; ++i) {
            const BlockShape shape{size, dim, c.heads[s], c.window, i % 2 == 1 ? shift : 0};
            x = swin_block(g, fmt::format("layers.{}.blocks.{}", s, i), x, shape);
        }
    }
    x = layer_norm(g, "norm", x, dim);
    x = op(g, "ReduceMean", "avgpool", {x},
           {OnnxAttribute::of_ints("axes", {1, 2}), OnnxAttribute::of_int("keepdims", 0)});
    g.gemm("head", x, dim, c.classes);
    g.rename_value("head", "logits");
    g.add_output("logits", OnnxElemType::float32, {batch, fixed(c.classes)});
    return g;
}

std::int64_t swin_parameter_count(const SwinConfig& c) {
    std::int64_t dim = c.embed_dim;
    std::int64_t total = 3 * dim * c.patch_size * c.patch_size + dim + 2 * dim;  // patch embedding + its norm
    const std::int64_t table_rows = (2 * c.window - 1) * (2 * c.window - 1);
    for (std::size_t s = 0; s < c.depths.size(); ++s) {
        if (s > 0) {
            total += 2 * 4 * dim + 4 * dim * 2 * dim;  // merging: LayerNorm(4C), Linear(4C, 2C) without bias
            dim *= 2;
        }
        const std::int64_t attention = (dim * 3 * dim + 3 * dim) + table_rows * c.heads[s] + (dim * dim + dim);
        const std::int64_t mlp = (dim * kMlpRatio * dim + kMlpRatio * dim) + (kMlpRatio * dim * dim + dim);
        total += c.depths[s] * (2 * dim + attention + 2 * dim + mlp);
    }
    return total + 2 * dim + dim * c.classes + c.classes;
}

GraphBuilder build_swin_t(std::uint64_t seed) { return build_swin(kSwinT, seed); }
GraphBuilder build_swin_s(std::uint64_t seed) { return build_swin(kSwinS, seed); }
GraphBuilder build_swin_b(std::uint64_t seed) { return build_swin(kSwinB, seed); }
GraphBuilder build_swin_l(std::uint64_t seed) { return build_swin(kSwinL, seed); }

}  // namespace inferbench::models
