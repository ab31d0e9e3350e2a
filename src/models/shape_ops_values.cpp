// Shape rules of the ops whose output sizes come from tensor values (Range, Tile, TopK, Size), from
// the data itself (NonZero, NonMaxSuppression: the largest size, marked data-dependent), or from
// a branch (If), and of the detection ops that index with such outputs (GatherND, ScatterND,
// RoiAlign).
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

bool range(ShapeContext& c, const OnnxNode& n) {
    const auto* start = c.constant(n, 0);
    const auto* limit = c.constant(n, 1);
    const auto* delta = c.constant(n, 2);
    const auto* type = c.in(n, 0);
    if (start == nullptr || limit == nullptr || delta == nullptr || type == nullptr || start->size() != 1 ||
        limit->size() != 1 || delta->size() != 1 || (*delta)[0] == 0)
        return false;
    const double steps = std::ceil(((*limit)[0] - (*start)[0]) / (*delta)[0]);
    const auto count = static_cast<std::int64_t>(std::max(steps, 0.0));
    c.set(n, 0, type->type, {count});
    if (count <= static_cast<std::int64_t>(kMaxFoldedElements)) {
        std::vector<double> values(at(count));
        for (std::size_t i = 0; i < values.size(); ++i) values[i] = (*start)[0] + static_cast<double>(i) * (*delta)[0];
        c.set_constant(n, 0, std::move(values));
    }
    return true;
}

bool tile(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto repeats = c.ints(n, 1);
    if (x == nullptr || !repeats || repeats->size() != x->dims.size()) return false;
    Dims dims = x->dims;
    for (std::size_t i = 0; i < dims.size(); ++i) {
        const auto repeated = checked_mul(dims[i], (*repeats)[i]);
        if (!repeated) return false;
        dims[i] = *repeated;
    }
    c.set(n, 0, x->type, dims);
    if (const auto* v = c.constant(n, 0); v != nullptr && dims.size() == 1) {
        std::vector<double> values;
        for (std::int64_t r = 0; r < (*repeats)[0]; ++r) values.insert(values.end(), v->begin(), v->end());
        c.set_constant(n, 0, std::move(values));
    }
    return true;
}

bool size(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    c.set(n, 0, DataType::int64, {});
    c.set_constant(n, 0, {static_cast<double>(x->elements())});
    return true;
}

// The indices of the non-zero elements: counted where the input is folded, else every element
// (the largest count) and data-dependent.
bool non_zero(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr) return false;
    const auto rank = static_cast<std::int64_t>(x->dims.size());
    const auto* v = c.constant(n, 0);
    if (v == nullptr) {
        c.data_dependent = true;
        c.set(n, 0, DataType::int64, {rank, x->elements()});
        return true;
    }
    const auto nonzero = static_cast<std::int64_t>(std::ranges::count_if(*v, [](double e) { return e != 0; }));
    c.set(n, 0, DataType::int64, {rank, nonzero});
    if (rank == 1) {
        std::vector<double> indices;
        for (std::size_t i = 0; i < v->size(); ++i)
            if ((*v)[i] != 0) indices.push_back(static_cast<double>(i));
        c.set_constant(n, 0, std::move(indices));
    }
    return true;
}

// Selected boxes [count, 3]: at most max_output_boxes_per_class per batch and class.
bool non_max_suppression(ShapeContext& c, const OnnxNode& n) {
    const auto* boxes = c.in(n, 0);
    const auto* scores = c.in(n, 1);
    if (boxes == nullptr || scores == nullptr || boxes->dims.size() != 3 || scores->dims.size() != 3) return false;
    std::int64_t per_class = 0;  // the input left out: no box is selected
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
        const auto limit = c.ints(n, 2);
        if (!limit || limit->size() != 1) return false;
        per_class = (*limit)[0];
    }
    const auto pairs = checked_mul(scores->dims[0], scores->dims[1]);
    const auto most = pairs ? checked_mul(*pairs, std::clamp<std::int64_t>(per_class, 0, boxes->dims[1])) : std::nullopt;
    if (!most) return false;
    c.data_dependent = true;
    c.set(n, 0, DataType::int64, {*most, 3});
    return true;
}

bool top_k(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    if (x == nullptr || x->dims.empty()) return false;
    const auto k = c.opset < 10 ? std::optional(Dims{int_attribute(n, "k", -1)}) : c.ints(n, 1);
    const auto axis = normalize(int_attribute(n, "axis", -1), x->dims.size());
    if (!k || k->size() != 1 || (*k)[0] < 0 || axis < 0 || at(axis) >= x->dims.size()) return false;
    Dims dims = x->dims;
    dims[at(axis)] = std::min(dims[at(axis)], (*k)[0]);
    c.set(n, 0, x->type, dims);
    c.set(n, 1, DataType::int64, dims);
    return true;
}

bool gather_nd(ShapeContext& c, const OnnxNode& n) {
    const auto* data = c.in(n, 0);
    const auto* indices = c.in(n, 1);
    const auto batch = int_attribute(n, "batch_dims", 0);
    if (data == nullptr || indices == nullptr || indices->dims.empty() || batch < 0) return false;
    const std::int64_t last = indices->dims.back();
    if (last < 0 || at(batch + last) > data->dims.size()) return false;
    Dims dims(indices->dims.begin(), indices->dims.end() - 1);
    dims.insert(dims.end(), data->dims.begin() + batch + last, data->dims.end());
    c.set(n, 0, data->type, dims);
    return true;
}

bool gather_elements(ShapeContext& c, const OnnxNode& n) {  // the indices' shape, the data's type
    const auto* data = c.in(n, 0);
    const auto* indices = c.in(n, 1);
    if (data == nullptr || indices == nullptr || data->dims.size() != indices->dims.size()) return false;
    c.set(n, 0, data->type, indices->dims);
    return true;
}

bool like_data(ShapeContext& c, const OnnxNode& n) {  // ScatterND, ScatterElements: the data's shape
    const auto* data = c.in(n, 0);
    if (data == nullptr) return false;
    c.set(n, 0, data->type, data->dims);
    return true;
}

bool roi_align(ShapeContext& c, const OnnxNode& n) {
    const auto* x = c.in(n, 0);
    const auto* rois = c.in(n, 1);
    if (x == nullptr || rois == nullptr || x->dims.size() != 4 || rois->dims.size() != 2) return false;
    c.set(n, 0, x->type,
          {rois->dims[0], x->dims[1], int_attribute(n, "output_height", 1), int_attribute(n, "output_width", 1)});
    return true;
}

// Both branches' outputs, where the condition is not folded: the larger of each dimension.
std::optional<ValueShape> larger(const ValueShape& a, const ValueShape& b) {
    if (a.dims.size() != b.dims.size()) return std::nullopt;
    ValueShape out = a;
    for (std::size_t i = 0; i < out.dims.size(); ++i) out.dims[i] = std::max(a.dims[i], b.dims[i]);
    out.data_dependent = true;
    return out;
}

bool branch_outputs(ShapeContext& c, const OnnxNode& n, const std::vector<const onnx::OnnxGraph*>& taken) {
    for (const auto* graph : taken)
        if (graph->outputs.size() != n.outputs.size()) return false;
    for (std::size_t i = 0; i < n.outputs.size(); ++i) {
        const auto* first = c.result.find(taken[0]->outputs[i].name);
        if (first == nullptr) return false;
        std::optional<ValueShape> shape = *first;
        if (taken.size() > 1) {
            const auto* second = c.result.find(taken[1]->outputs[i].name);
            shape = second == nullptr ? std::nullopt : larger(*first, *second);
        }
        if (!shape) return false;
        if (n.outputs[i].empty()) continue;
        shape->data_dependent = shape->data_dependent || c.data_dependent;
        c.result.values[n.outputs[i]] = *shape;
        if (const auto it = c.result.constants.find(taken[0]->outputs[i].name);
            taken.size() == 1 && it != c.result.constants.end())
            c.result.constants[n.outputs[i]] = it->second;
    }
    return true;
}

bool if_then_else(ShapeContext& c, const OnnxNode& n) {
    const auto then_branch = n.subgraphs.find("then_branch");
    const auto else_branch = n.subgraphs.find("else_branch");
    const auto* condition = c.constant(n, 0);
    if (then_branch == n.subgraphs.end() || else_branch == n.subgraphs.end() || n.outputs.empty()) return false;
    // A folded condition picks its branch; one folded from data-dependent sizes (at their largest)
    // picks the branch those sizes take, and the outputs stay data-dependent.
    std::vector<const onnx::OnnxGraph*> taken{then_branch->second.get(), else_branch->second.get()};
    if (condition != nullptr && condition->size() == 1) taken = {(*condition)[0] != 0 ? taken[0] : taken[1]};
    const bool outer = c.data_dependent;
    for (const auto* graph : taken) {
        const bool ok = infer_subgraph(c, *graph);
        c.data_dependent = outer;
        if (!ok) return false;
    }
    if (!branch_outputs(c, n, taken)) return false;
    c.result.branches[n.outputs[0]] = taken;
    return true;
}

}  // namespace

ShapeRule find_value_rule(std::string_view op_type) {
    static const std::unordered_map<std::string_view, ShapeRule> rules = {
        {"Range", range},
        {"Tile", tile},
        {"Size", size},
        {"NonZero", non_zero},
        {"NonMaxSuppression", non_max_suppression},
        {"TopK", top_k},
        {"GatherND", gather_nd},
        {"GatherElements", gather_elements},
        {"ScatterND", like_data},
        {"ScatterElements", like_data},
        {"Scatter", like_data},
        {"RoiAlign", roi_align},
        {"If", if_then_else},
    };
    const auto it = rules.find(op_type);
    return it == rules.end() ? nullptr : it->second;
}

}  // namespace inferbench::models::detail
