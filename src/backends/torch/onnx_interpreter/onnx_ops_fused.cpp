// Kernels of the fused operators fuse_graph() writes (domain kFusedDomain): one LibTorch call where
// the exporter wrote a chain of nodes.
#include <torch/version.h>

#include <algorithm>
#include <limits>
#include <map>

#include <ATen/InferSize.h>

#include "backends/torch/onnx_interpreter/onnx_fusion.hpp"
#include "backends/torch/onnx_interpreter/onnx_view_chain.hpp"

// scaled_dot_product_attention with an explicit scale arrived in LibTorch 2.1; older versions run the
// same arithmetic as matmul, softmax, matmul.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define INFERBENCH_HAVE_SDPA 1
#else
#define INFERBENCH_HAVE_SDPA 0
#endif

namespace inferbench::torch_onnx {

namespace {

// x [.., K] @ W + b as one GEMM on a dense x.
torch::Tensor dense_linear(const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
    std::vector<std::int64_t> sizes = x.sizes().vec();
    sizes.back() = w.size(1);
    return torch::addmm(b, x.reshape({-1, x.size(-1)}), w).view(sizes);
}

// Linear(x, W [K, N], b [N]) = x W + b. A transposed view x (nn.MultiheadAttention's sequence-first
// layout over batch-first activations) is multiplied in its memory order and handed back as the same
// view of the product, where matmul would first copy it to its logical order.
Kernel make_linear(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const torch::Tensor& w = in[1];
        const torch::Tensor& b = in[2];
        if (x.dim() == 2) return torch::addmm(b, x, w);
        if (x.dim() > 2 && x.is_contiguous()) return dense_linear(x, w, b);
        if (const auto order = dense_order(x)) return dense_linear(x.permute(*order), w, b).permute(inverse_permutation(*order));
        return torch::matmul(x, w).add_(b);  // a fresh product: adding in place is safe
    });
}

// RMSNormalization(x [, weight]) over the trailing axes from `axis` on. Half-precision inputs are
// squared and averaged in fp32 (x^2 overflows fp16 from |x| = 256 on), as PyTorch's RMSNorm does.
Kernel make_rms_norm(const NodeContext& ctx) {
    ctx.expect_inputs(1, 2);
    const std::int64_t axis = ctx.int_attribute("axis", -1);
    const double epsilon = ctx.float_attribute("epsilon", 1e-5F);
    return single_output([axis, epsilon](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        std::vector<std::int64_t> dims;
        for (std::int64_t d = normalize_axis(axis, x.dim()); d < x.dim(); ++d) dims.push_back(d);
        const bool narrow = x.scalar_type() == torch::kHalf || x.scalar_type() == torch::kBFloat16;
        const torch::Tensor wide = narrow ? x.to(torch::kFloat) : x;
        torch::Tensor y = (wide * torch::rsqrt(wide.square().mean(dims, true) + epsilon)).to(x.scalar_type());
        return in.size() > 1 && in[1].defined() ? y * in[1] : y;
    });
}

torch::Tensor plain_attention(const torch::Tensor& q, const torch::Tensor& kt, const torch::Tensor& v,
                              const torch::Tensor& mask, double scale) {
    torch::Tensor scores = torch::matmul(q, kt);
    if (scale != 1.0) scores.mul_(scale);  // a fresh product: scaling in place is safe
    if (mask.defined()) scores = scores + mask;
    return torch::matmul(torch::softmax(scores, -1), v);
}

#if INFERBENCH_HAVE_SDPA
// SDPA's fused kernels take [batch, heads, length, head size] with equal batch dimensions; 3-D
// inputs (nn.MultiheadAttention's [batch * heads, length, head size]) get a leading axis.
bool sdpa_fits(const torch::Tensor& q, const torch::Tensor& kt, const torch::Tensor& v) {
    const auto rank = q.dim();
    if ((rank != 3 && rank != 4) || kt.dim() != rank || v.dim() != rank) return false;
    const auto batch = q.sizes().slice(0, static_cast<std::size_t>(rank - 2));
    return batch == kt.sizes().slice(0, static_cast<std::size_t>(rank - 2)) &&
           batch == v.sizes().slice(0, static_cast<std::size_t>(rank - 2)) && kt.size(-2) == q.size(-1) &&
           v.size(-2) == kt.size(-1);
}

torch::Tensor sdpa(const torch::Tensor& q, const torch::Tensor& kt, const torch::Tensor& v, const torch::Tensor& mask,
                   double scale) {
    const bool add_axis = q.dim() == 3;
    const auto four_d = [add_axis](const torch::Tensor& t) { return add_axis ? t.unsqueeze(0) : t; };
    const c10::optional<torch::Tensor> attn_mask = mask.defined() ? c10::optional<torch::Tensor>(mask) : c10::nullopt;
    torch::Tensor out = at::scaled_dot_product_attention(four_d(q), four_d(kt.transpose(-2, -1)), four_d(v), attn_mask,
                                                         0.0, false, scale);
    return add_axis ? out.squeeze(0) : out;
}
#endif

torch::Tensor attention(std::span<const torch::Tensor> in, double scale) {
    const torch::Tensor mask = in.size() > 3 ? in[3] : torch::Tensor();
#if INFERBENCH_HAVE_SDPA
    const bool mask_fits = !mask.defined() || mask.scalar_type() == in[0].scalar_type();
    if (mask_fits && sdpa_fits(in[0], in[1], in[2])) return sdpa(in[0], in[1], in[2], mask, scale);
#endif
    return plain_attention(in[0], in[1], in[2], mask, scale);
}

// Attention(Q, K^T, V [, mask]) = softmax(Q K^T * scale + mask, last axis) V. With zero_nan_rows, the
// output rows that come out NaN are zero: the export zeroed NaN probabilities (a row whose scores are
// all masked, or NaN), which makes those rows of P V zero; a NaN in V itself is zeroed too.
Kernel make_attention(const NodeContext& ctx) {
    ctx.expect_inputs(3, 4);
    const double scale = ctx.float_attribute("scale", 1.0F);
    const bool zero_nan_rows = ctx.int_attribute("zero_nan_rows", 0) != 0;
    return single_output([scale, zero_nan_rows](const RunContext&, std::span<const torch::Tensor> in) {
        torch::Tensor out = attention(in, scale);
        if (!zero_nan_rows) return out;
        constexpr double inf = std::numeric_limits<double>::infinity();
        return out.nan_to_num_(0.0, inf, -inf);
    });
}

// A Reshape's target for an input of `sizes`: 0 keeps the input's dimension, -1 is inferred.
// Reshape's target with ONNX's meaning of 0: the input's dimension, or (allowzero) an empty one.
std::vector<std::int64_t> reshape_target(std::vector<std::int64_t> target, c10::IntArrayRef sizes, std::int64_t numel,
                                         bool allow_zero) {
    for (std::size_t d = 0; d < target.size() && !allow_zero; ++d) {
        if (target[d] == 0 && d < sizes.size()) target[d] = sizes[d];
    }
    return at::infer_size(target, numel);
}

// ViewChain(x, shape1, shape2; perm, allowzero_first, allowzero_second) =
// Reshape(Transpose(Reshape(x, shape1), perm), shape2), as one view where it can be (onnx_view_chain.hpp).
Kernel make_view_chain(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    const IntListInput first(ctx, 1);
    const IntListInput second(ctx, 2);
    const std::vector<std::int64_t> perm = ctx.ints_attribute("perm");
    const bool zero1 = ctx.int_attribute("allowzero_first", 0) != 0;
    const bool zero2 = ctx.int_attribute("allowzero_second", 0) != 0;
    return single_output([first, second, perm, zero1, zero2](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const std::vector<std::int64_t> shape1 = reshape_target(first.get(in), x.sizes(), x.numel(), zero1);
        std::vector<std::int64_t> permuted;
        for (const std::int64_t p : perm) permuted.push_back(shape1.at(static_cast<std::size_t>(normalize_axis(p, static_cast<std::int64_t>(shape1.size())))));
        const std::vector<std::int64_t> shape2 = reshape_target(second.get(in), permuted, x.numel(), zero2);
        const ViewStep steps[] = {{ViewStep::Kind::reshape, shape1}, {ViewStep::Kind::permute, perm},
                                  {ViewStep::Kind::reshape, shape2}};
        if (auto chained = apply_view_chain(x, steps)) return *chained;
        return x.reshape(shape1).permute(perm).reshape(shape2);
    });
}

}  // namespace

KernelFactory find_fused_kernel_factory(std::string_view op_type) {
    static const std::map<std::string_view, KernelFactory> table = {
        {"Linear", make_linear},
        {"RMSNormalization", make_rms_norm},
        {"Attention", make_attention},
        {"ViewChain", make_view_chain},
    };
    const auto it = table.find(op_type);
    return it == table.end() ? nullptr : it->second;
}

}  // namespace inferbench::torch_onnx
