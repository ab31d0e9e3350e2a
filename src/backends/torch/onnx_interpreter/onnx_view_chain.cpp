#include "backends/torch/onnx_interpreter/onnx_view_chain.hpp"

#include <algorithm>

namespace inferbench::torch_onnx {

namespace {

using Ints = std::vector<std::int64_t>;

// The input seen as factors: `v`, a view of it whose axes are the factors, and for each dimension of
// the chain's current value the factors that make it up, outermost first (none: a dimension of 1).
struct Factored {
    torch::Tensor v;
    std::vector<Ints> groups;

    std::int64_t size(std::int64_t axis) const { return v.size(axis); }

    // Splits factor `axis` into (outer, size / outer); later axes move up by one, and the inner part
    // joins the groups right after the outer one, so they still describe the same value.
    void split(std::int64_t axis, std::int64_t outer) {
        v = v.unflatten(axis, {outer, v.size(axis) / outer});
        for (Ints& group : groups) {
            for (std::int64_t& a : group) a += a > axis ? 1 : 0;
            if (const auto it = std::ranges::find(group, axis); it != group.end()) group.insert(it + 1, axis + 1);
        }
    }

    // The chain's value reshaped: by regrouping the factors where the new dimensions are products of
    // them (splitting some), else (a new dimension cuts across the old ones without a common factoring,
    // [6, 10] -> [4, 15]) by reshape() of the value itself, which copies it unless it is dense.
    void reshape(const Ints& shape) {
        if (!regroup(shape)) {
            v = result().reshape(shape);
            groups.clear();
            for (std::int64_t d = 0; d < v.dim(); ++d) groups.push_back({d});
        }
    }

    bool regroup(const Ints& shape) {
        Ints order;
        for (const Ints& group : groups) order.insert(order.end(), group.begin(), group.end());
        std::vector<Ints> regrouped;
        std::size_t next = 0;
        for (const std::int64_t dim : shape) {
            Ints group;
            std::int64_t need = dim;
            while (need > 1) {
                if (next == order.size()) return false;
                const std::int64_t axis = order[next];
                const std::int64_t s = size(axis);
                if (s == 1 || need % s == 0) {
                    group.push_back(axis);
                    need /= s;
                    ++next;
                } else if (s % need == 0) {
                    split(axis, need);
                    for (std::size_t k = next + 1; k < order.size(); ++k) order[k] += order[k] > axis ? 1 : 0;
                    for (Ints& g : regrouped) {
                        for (std::int64_t& a : g) a += a > axis ? 1 : 0;
                    }
                    for (std::int64_t& a : group) a += a > axis ? 1 : 0;
                    group.push_back(axis);
                    order[next] = axis + 1;  // the inner part, still to place
                    need = 1;
                } else {
                    return false;
                }
            }
            regrouped.push_back(std::move(group));
        }
        // Factors of size 1 left over join the last dimension (or the first, if that is all there is).
        for (; next < order.size(); ++next) {
            if (size(order[next]) != 1 || regrouped.empty()) return false;
            regrouped.back().push_back(order[next]);
        }
        groups = std::move(regrouped);
        return true;
    }

    void permute(const Ints& perm) {
        std::vector<Ints> reordered;
        reordered.reserve(perm.size());
        for (const std::int64_t p : perm) reordered.push_back(groups.at(static_cast<std::size_t>(p)));
        groups = std::move(reordered);
    }

    torch::Tensor result() const {
        Ints order;
        Ints shape;
        for (const Ints& group : groups) {
            std::int64_t n = 1;
            for (const std::int64_t a : group) n *= size(a);
            order.insert(order.end(), group.begin(), group.end());
            shape.push_back(n);
        }
        return v.permute(order).reshape(shape);
    }
};

}  // namespace

std::optional<torch::Tensor> apply_view_chain(const torch::Tensor& x, std::span<const ViewStep> steps) {
    if (x.numel() == 0 || x.dim() == 0) return std::nullopt;
    Factored f{x, {}};
    for (std::int64_t d = 0; d < x.dim(); ++d) f.groups.push_back({d});
    for (const ViewStep& step : steps) {
        if (step.kind == ViewStep::Kind::permute) {
            if (step.values.size() != f.groups.size()) return std::nullopt;
            f.permute(step.values);
        } else if (c10::multiply_integers(step.values) != x.numel()) {
            return std::nullopt;
        } else {
            f.reshape(step.values);
        }
    }
    return f.result();
}

}  // namespace inferbench::torch_onnx
