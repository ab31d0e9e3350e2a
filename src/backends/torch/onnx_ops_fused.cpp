// Kernels of the fused operators fuse_graph() writes (domain kFusedDomain): one LibTorch call where
// the exporter wrote a chain of nodes.
#include <torch/version.h>

#include <algorithm>
#include <map>

#include "backends/torch/onnx_fusion.hpp"

// scaled_dot_product_attention with an explicit scale arrived in LibTorch 2.1; older versions run the
// same arithmetic as matmul, softmax, matmul.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
#define INFERBENCH_HAVE_SDPA 1
#else
#define INFERBENCH_HAVE_SDPA 0
#endif

namespace inferbench::torch_onnx {

namespace {

// Linear(x, W [K, N], b [N]) = x W + b.
Kernel make_linear(const NodeContext& ctx) {
    ctx.expect_inputs(3, 3);
    return single_output([](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor& x = in[0];
        const torch::Tensor& w = in[1];
        const torch::Tensor& b = in[2];
        if (x.dim() == 2) return torch::addmm(b, x, w);
        if (x.dim() > 2 && x.is_contiguous()) {
            std::vector<std::int64_t> sizes = x.sizes().vec();
            sizes.back() = w.size(1);
            return torch::addmm(b, x.reshape({-1, x.size(-1)}), w).view(sizes);
        }
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

// Attention(Q, K^T, V [, mask]) = softmax(Q K^T * scale + mask, last axis) V.
Kernel make_attention(const NodeContext& ctx) {
    ctx.expect_inputs(3, 4);
    const double scale = ctx.float_attribute("scale", 1.0F);
    return single_output([scale](const RunContext&, std::span<const torch::Tensor> in) {
        const torch::Tensor mask = in.size() > 3 ? in[3] : torch::Tensor();
#if INFERBENCH_HAVE_SDPA
        const bool mask_fits = !mask.defined() || mask.scalar_type() == in[0].scalar_type();
        if (mask_fits && sdpa_fits(in[0], in[1], in[2])) return sdpa(in[0], in[1], in[2], mask, scale);
#endif
        return plain_attention(in[0], in[1], in[2], mask, scale);
    });
}

}  // namespace

KernelFactory find_fused_kernel_factory(std::string_view op_type) {
    static const std::map<std::string_view, KernelFactory> table = {
        {"Linear", make_linear},
        {"RMSNormalization", make_rms_norm},
        {"Attention", make_attention},
    };
    const auto it = table.find(op_type);
    return it == table.end() ? nullptr : it->second;
}

}  // namespace inferbench::torch_onnx
