// A chain of reshapes and permutations taken as one view where the steps one by one would copy.
// Exporters split attention heads as Reshape [L, B, E] -> [L, B * H, d], Transpose, Reshape
// [B, H, L, d]: on a transposed view (nn.MultiheadAttention's sequence-first layout) the first
// Reshape cannot be a view and copies, though the chain as a whole is x.view(L, B, H, d).permute(...).
//
// The chain is followed on the input's axes split into factors: a reshape splits an axis where the
// new shape cuts through it (always a view) and groups the factors into the new dimensions; a
// permutation reorders the groups; at the end the factors are put in order and each group merged.
// Only that merge can copy, and a reshape whose dimensions have no common factoring with the value's
// ([6, 10] -> [4, 15]), which copies as a plain reshape of a non-dense value would.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace inferbench::torch_onnx {

struct ViewStep {
    enum class Kind { reshape, permute } kind;
    std::vector<std::int64_t> values;  // the new shape (every dimension given) or the permutation
};

// The chain applied to x; nullopt where a reshape does not fit x's size, a permutation x's rank, or x
// is empty (the caller runs the steps one by one then, which report the error).
std::optional<torch::Tensor> apply_view_chain(const torch::Tensor& x, std::span<const ViewStep> steps);

}  // namespace inferbench::torch_onnx
