// Shape rules of the ops that move or reshape data, and the constant folding that gives Reshape,
// Slice, Expand and Resize static targets (Shape -> Gather -> Concat chains of exported graphs).
#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "core/tensor_size.hpp"
#include "models/shape_ops.hpp"

namespace inferbench::models::detail {

using onnx::DataType;
using onnx::OnnxNode;
using Dims = std::vector<std::int64_t>;

namespace {

std::int64_t normalize(std::int64_t axis, std::size_t rank) {
    return axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis;
}

std::size_t at(std::int64_t i) { return static_cast<std::size_t>(i); }

std::vector<double> as_doubles(const Dims& dims) { return {dims.begin(), dims.end()}; }

// Axes from the attribute (older opsets) or from input `index` (newer).
std::optional<Dims> axes_of(ShapeContext& c, const OnnxNode& n, std::size_t index) {
    if (auto attr = ints_attribute(n, "axes")) return attr;
    return c.ints(n, index);
}

bool reshape(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    auto target = c.ints(n, 1);
    if (x == nullptr || !target) return false;
    const bool allow_zero = int_attribute(n, "allowzero", 0) != 0;
    std::int64_t known = 1;
    std::optional<std::size_t> infer;
    for (std::size_t i = 0; i < target->size(); ++i) {
        auto& d = (*target)[i];
        if (d == 0 && !allow_zero) {
            if (i >= x->dims.size()) return false;
            d = x->dims[i];
        }
        if (d == -1)
            infer = i;
        else if (const auto next = checked_mul(known, d))
            known = *next;
        else
            return false;
    }
    if (infer) {
        if (known == 0 || x->elements() % known != 0) return false;
        (*target)[*infer] = x->elements() / known;
    }
    c.set(n, 0, x->type, *target);
    if (const auto* v = c.constant(n, 0)) c.set_constant(n, 0, *v);
    return true;
}

bool transpose(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    Dims perm(x->dims.size());
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(perm.size() - 1 - i);
    perm = ints_attribute(n, "perm").value_or(perm);
    if (perm.size() != x->dims.size()) return false;
    Dims dims;
    for (const auto p : perm) {
        if (p < 0 || at(p) >= x->dims.size()) return false;
        dims.push_back(x->dims[at(p)]);
    }
    c.set(n, 0, x->type, dims);
    if (const auto* v = c.constant(n, 0)) {
        const auto values = remap_values(*v, x->dims, dims, [&](Dims& coordinate) {
            Dims source(coordinate.size());
            for (std::size_t i = 0; i < perm.size(); ++i) source[at(perm[i])] = coordinate[i];
            coordinate = source;
        });
        if (values) c.set_constant(n, 0, *values);
    }
    return true;
}

bool concat(ShapeContext& c, const OnnxNode& n) {
    const auto* first = c.in(n, 0);
    if (first == nullptr) return false;
    const auto axis = normalize(int_attribute(n, "axis", 0), first->dims.size());
    if (axis < 0 || at(axis) >= first->dims.size()) return false;
    Dims dims = first->dims;
    dims[at(axis)] = 0;
    std::vector<double> folded;
    bool foldable = first->dims.size() == 1;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
        const auto* x = c.in(n, i);
        if (x == nullptr || x->dims.size() != dims.size()) return false;
        dims[at(axis)] += x->dims[at(axis)];
        const auto* v = c.constant(n, i);
        if (v == nullptr)
            foldable = false;
        else if (foldable)
            folded.insert(folded.end(), v->begin(), v->end());
    }
    c.set(n, 0, first->type, dims);
    if (foldable) c.set_constant(n, 0, std::move(folded));
    return true;
}

struct SliceRange {
    std::int64_t start = 0, count = 0, step = 1;
};

SliceRange slice_range(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step) {
    start = start < 0 ? start + dim : start;
    end = end < 0 ? end + dim : end;
    if (step > 0) {
        start = std::clamp<std::int64_t>(start, 0, dim);
        end = std::clamp<std::int64_t>(end, 0, dim);
        return {start, std::max<std::int64_t>(0, (end - start + step - 1) / step), step};
    }
    start = std::clamp<std::int64_t>(start, 0, dim - 1);
    end = std::clamp<std::int64_t>(end, -1, dim - 1);
    return {start, std::max<std::int64_t>(0, (start - end - step - 1) / -step), step};
}

bool slice(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const bool old = c.opset < 10;
    const auto starts = old ? ints_attribute(n, "starts") : c.ints(n, 1);
    const auto ends = old ? ints_attribute(n, "ends") : c.ints(n, 2);
    if (x == nullptr || !starts || !ends || starts->size() != ends->size()) return false;
    Dims axes(starts->size());
    for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<std::int64_t>(i);
    axes = (old ? ints_attribute(n, "axes") : c.ints(n, 3)).value_or(axes);
    const Dims steps = old ? Dims(starts->size(), 1) : c.ints(n, 4).value_or(Dims(starts->size(), 1));
    Dims dims = x->dims;
    std::vector<SliceRange> ranges(dims.size(), SliceRange{});
    for (std::size_t i = 0; i < dims.size(); ++i) ranges[i] = {0, dims[i], 1};
    for (std::size_t i = 0; i < starts->size() && i < axes.size() && i < steps.size(); ++i) {
        const auto axis = normalize(axes[i], dims.size());
        if (axis < 0 || at(axis) >= dims.size() || steps[i] == 0) return false;
        ranges[at(axis)] = slice_range(dims[at(axis)], (*starts)[i], (*ends)[i], steps[i]);
        dims[at(axis)] = ranges[at(axis)].count;
    }
    c.set(n, 0, x->type, dims);
    if (const auto* v = c.constant(n, 0)) {
        const auto values = remap_values(*v, x->dims, dims, [&](Dims& coordinate) {
            for (std::size_t i = 0; i < coordinate.size(); ++i)
                coordinate[i] = ranges[i].start + coordinate[i] * ranges[i].step;
        });
        if (values) c.set_constant(n, 0, *values);
    }
    return true;
}

bool split(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const auto axis = normalize(int_attribute(n, "axis", 0), x->dims.size());
    if (axis < 0 || at(axis) >= x->dims.size()) return false;
    const std::int64_t total = x->dims[at(axis)];
    const auto parts = static_cast<std::int64_t>(n.outputs.size());
    auto sizes = ints_attribute(n, "split");
    if (!sizes && n.inputs.size() > 1 && !n.inputs[1].empty()) sizes = c.ints(n, 1);
    if (!sizes) {
        const std::int64_t each = (total + parts - 1) / parts;  // the last part smaller (opset 18)
        sizes = Dims{};
        for (std::int64_t i = 0; i < parts; ++i) sizes->push_back(std::min(each, total - i * each));
    }
    if (static_cast<std::int64_t>(sizes->size()) != parts) return false;
    for (std::size_t i = 0; i < sizes->size(); ++i) {
        Dims dims = x->dims;
        dims[at(axis)] = (*sizes)[i];
        c.set(n, i, x->type, dims);
    }
    return true;
}

bool gather(ShapeContext& c, const OnnxNode& n) {
    const auto* data = c.in(n, 0);
    const auto* indices = c.in(n, 1);
    if (data == nullptr || indices == nullptr || data->dims.empty()) return false;
    const auto axis = normalize(int_attribute(n, "axis", 0), data->dims.size());
    if (axis < 0 || at(axis) >= data->dims.size()) return false;
    Dims dims(data->dims.begin(), data->dims.begin() + axis);
    dims.insert(dims.end(), indices->dims.begin(), indices->dims.end());
    dims.insert(dims.end(), data->dims.begin() + axis + 1, data->dims.end());
    c.set(n, 0, data->type, dims);
    const auto* v = c.constant(n, 0);
    const auto idx = c.ints(n, 1);
    if (v != nullptr && idx && data->dims.size() == 1) {
        std::vector<double> out;
        for (auto i : *idx) {
            i = i < 0 ? i + data->dims[0] : i;
            if (i < 0 || at(i) >= v->size()) return true;
            out.push_back((*v)[at(i)]);
        }
        c.set_constant(n, 0, std::move(out));
    }
    return true;
}

bool unsqueeze(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto axes = axes_of(c, n, 1);
    if (x == nullptr || !axes) return false;
    const std::size_t rank = x->dims.size() + axes->size();
    std::vector<bool> inserted(rank, false);
    for (const auto a : *axes) {
        const auto axis = normalize(a, rank);
        if (axis < 0 || at(axis) >= rank) return false;
        inserted[at(axis)] = true;
    }
    Dims dims;
    std::size_t next = 0;
    for (std::size_t i = 0; i < rank; ++i) dims.push_back(inserted[i] ? 1 : x->dims[next++]);
    c.set(n, 0, x->type, dims);
    if (const auto* v = c.constant(n, 0)) c.set_constant(n, 0, *v);
    return true;
}

bool squeeze(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const bool given = ints_attribute(n, "axes") || (n.inputs.size() > 1 && !n.inputs[1].empty());
    const auto axes = axes_of(c, n, 1);
    if (given && !axes) return false;
    std::vector<bool> drop(x->dims.size(), false);
    for (std::size_t i = 0; i < drop.size(); ++i) drop[i] = !given && x->dims[i] == 1;
    for (const auto a : axes.value_or(Dims{})) {
        const auto axis = normalize(a, x->dims.size());
        if (axis < 0 || at(axis) >= drop.size()) return false;
        drop[at(axis)] = true;
    }
    Dims dims;
    for (std::size_t i = 0; i < drop.size(); ++i)
        if (!drop[i]) dims.push_back(x->dims[i]);
    c.set(n, 0, x->type, dims);
    if (const auto* v = c.constant(n, 0)) c.set_constant(n, 0, *v);
    return true;
}

bool constant(ShapeContext& c, const OnnxNode& n) {
    DataType type = DataType::undefined;
    Dims dims;
    auto values = constant_attribute_values(n, type, dims);
    if (type == DataType::undefined) return false;
    c.set(n, 0, type, dims);
    if (values) c.set_constant(n, 0, std::move(*values));
    return true;
}

bool shape(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const auto rank = static_cast<std::int64_t>(x->dims.size());
    const auto start = std::clamp<std::int64_t>(normalize(int_attribute(n, "start", 0), x->dims.size()), 0, rank);
    const auto end = std::clamp<std::int64_t>(normalize(int_attribute(n, "end", rank), x->dims.size()), start, rank);
    const Dims dims(x->dims.begin() + start, x->dims.begin() + end);
    c.set(n, 0, DataType::int64, {static_cast<std::int64_t>(dims.size())});
    c.set_constant(n, 0, as_doubles(dims));
    return true;
}

bool constant_of_shape(ShapeContext& c, const OnnxNode& n) {
    const auto dims = c.ints(n, 0);
    if (!dims) return false;
    DataType type = DataType::float32;
    Dims ignored;
    std::optional<std::vector<double>> value;
    if (n.attributes.contains("value")) value = constant_attribute_values(n, type, ignored);
    c.set(n, 0, type, *dims);
    const std::int64_t elements = checked_element_count(*dims).value_or(-1);
    const double fill = value && value->size() == 1 ? (*value)[0] : 0.0;
    if (elements >= 0 && elements <= static_cast<std::int64_t>(kMaxFoldedElements) && (!value || value->size() == 1))
        c.set_constant(n, 0, std::vector<double>(static_cast<std::size_t>(elements), fill));
    return true;
}

bool resize(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const bool upsample = n.op_type == "Upsample" || c.opset < 11;
    if (const auto sizes = upsample ? std::nullopt : c.ints(n, 3); sizes && sizes->size() == x->dims.size()) {
        c.set(n, 0, x->type, *sizes);
        return true;
    }
    const auto* scales = c.constant(n, upsample ? 1 : 2);
    if (scales == nullptr || scales->size() != x->dims.size()) return false;
    Dims dims;
    for (std::size_t i = 0; i < x->dims.size(); ++i)
        dims.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(x->dims[i]) * (*scales)[i])));
    c.set(n, 0, x->type, dims);
    return true;
}

bool reduce(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const bool given = ints_attribute(n, "axes") || (n.inputs.size() > 1 && !n.inputs[1].empty());
    const auto axes = axes_of(c, n, 1);
    if (given && !axes) return false;
    if (!given && int_attribute(n, "noop_with_empty_axes", 0) != 0) {
        c.set(n, 0, x->type, x->dims);
        return true;
    }
    std::vector<bool> reduced(x->dims.size(), !given);
    for (const auto a : axes.value_or(Dims{})) {
        const auto axis = normalize(a, x->dims.size());
        if (axis < 0 || at(axis) >= reduced.size()) return false;
        reduced[at(axis)] = true;
    }
    const bool keep = int_attribute(n, "keepdims", 1) != 0;
    Dims dims;
    for (std::size_t i = 0; i < reduced.size(); ++i) {
        if (!reduced[i])
            dims.push_back(x->dims[i]);
        else if (keep)
            dims.push_back(1);
    }
    c.set(n, 0, x->type, dims);
    fold_reduce(c, n, dims);
    return true;
}

bool expand(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto target = c.ints(n, 1);
    if (x == nullptr || !target) return false;
    const auto dims = broadcast(x->dims, *target);
    if (!dims) return false;
    c.set(n, 0, x->type, *dims);
    if (const auto* v = c.constant(n, 0))
        if (auto values = broadcast_values(*v, x->dims, *dims)) c.set_constant(n, 0, std::move(*values));
    return true;
}

bool pad(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto pads = c.opset < 11 ? ints_attribute(n, "pads") : c.ints(n, 1);
    if (x == nullptr || !pads || pads->size() != 2 * x->dims.size()) return false;  // axes input: not handled
    Dims dims = x->dims;
    for (std::size_t i = 0; i < dims.size(); ++i) dims[i] += (*pads)[i] + (*pads)[i + dims.size()];
    c.set(n, 0, x->type, dims);
    return true;
}

}  // namespace

std::optional<std::vector<double>> constant_attribute_values(const OnnxNode& n, DataType& type, Dims& dims) {
    for (const auto& [name, value] : n.attributes) {
        if (const auto* t = std::get_if<onnx::OnnxTensor>(&value); t != nullptr && (name == "value")) {
            type = t->data_type;
            dims = t->dims;
            return tensor_values(*t);
        }
        if (const auto* i = std::get_if<std::int64_t>(&value); i != nullptr && name == "value_int")
            return type = DataType::int64, dims = {}, std::vector<double>{static_cast<double>(*i)};
        if (const auto* f = std::get_if<float>(&value); f != nullptr && name == "value_float")
            return type = DataType::float32, dims = {}, std::vector<double>{static_cast<double>(*f)};
        if (const auto* is = std::get_if<Dims>(&value); is != nullptr && name == "value_ints")
            return type = DataType::int64, dims = {static_cast<std::int64_t>(is->size())}, as_doubles(*is);
        if (const auto* fs = std::get_if<std::vector<float>>(&value); fs != nullptr && name == "value_floats")
            return type = DataType::float32, dims = {static_cast<std::int64_t>(fs->size())},
                   std::vector<double>(fs->begin(), fs->end());
    }
    return std::nullopt;
}

ShapeRule find_tensor_rule(std::string_view op_type) {
    static const std::unordered_map<std::string_view, ShapeRule> rules = {
        {"Reshape", reshape},
        {"Transpose", transpose},
        {"Concat", concat},
        {"Slice", slice},
        {"Split", split},
        {"Gather", gather},
        {"Unsqueeze", unsqueeze},
        {"Squeeze", squeeze},
        {"Constant", constant},
        {"Shape", shape},
        {"ConstantOfShape", constant_of_shape},
        {"Resize", resize},
        {"Upsample", resize},
        {"ReduceMean", reduce},
        {"ReduceSum", reduce},
        {"ReduceMax", reduce},
        {"ReduceMin", reduce},
        {"ReduceProd", reduce},
        {"ReduceL2", reduce},
        {"Expand", expand},
        {"Pad", pad},
    };
    const auto it = rules.find(op_type);
    return it == rules.end() ? nullptr : it->second;
}

}  // namespace inferbench::models::detail
