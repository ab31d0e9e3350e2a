#include "backends/torch/onnx_interpreter/onnx_shape_analysis.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace inferbench::torch_onnx {

namespace {

// How an operator's output shape depends on its inputs. Every operator the interpreter supports
// that is not listed has an output shape set by its inputs' shapes (and attributes) alone; an
// operator added to the interpreter whose shape depends on input values belongs in one of these.
enum class ShapeRule { input_shapes, later_input_values, all_input_values, data };

using namespace std::string_view_literals;

// The output shape also depends on the values of inputs 1, 2, ... (targets, repeats, pads, axes, K).
constexpr std::array kLaterInputValues = {
    "Reshape"sv,    "Expand"sv,    "Tile"sv,      "Slice"sv,      "Pad"sv,  "Resize"sv,   "Squeeze"sv,
    "Unsqueeze"sv,  "Split"sv,     "ReduceMean"sv, "ReduceSum"sv, "ReduceMax"sv, "ReduceMin"sv, "ReduceProd"sv,
    "TopK"sv,       "Upsample"sv,  "CenterCropPad"sv, "OneHot"sv, "ViewChain"sv};
// On the values of every input.
constexpr std::array kAllInputValues = {"ConstantOfShape"sv, "Range"sv};
// On the data itself (what is selected or kept), or on a branch taken at run time.
constexpr std::array kData = {"NonZero"sv, "NonMaxSuppression"sv, "If"sv, "Loop"sv, "Compress"sv, "Unique"sv};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& ops, std::string_view op) {
    return std::ranges::find(ops, op) != ops.end();
}

ShapeRule rule_of(std::string_view op) {
    if (listed(kLaterInputValues, op)) return ShapeRule::later_input_values;
    if (listed(kAllInputValues, op)) return ShapeRule::all_input_values;
    if (listed(kData, op)) return ShapeRule::data;
    return ShapeRule::input_shapes;
}

struct Flags {
    std::vector<bool> shape_fixed;  // the value's shape follows from the graph inputs' shapes
    std::vector<bool> value_fixed;  // the value itself does
};

bool all_of_inputs(const StepSlots& step, const std::vector<bool>& flags, std::size_t from) {
    for (std::size_t k = from; k < step.inputs.size(); ++k) {
        if (step.inputs[k] != kAbsentSlot && !flags[step.inputs[k]]) return false;
    }
    return true;
}

bool output_shape_fixed(const StepSlots& step, const Flags& f) {
    if (!all_of_inputs(step, f.shape_fixed, 0)) return false;
    switch (rule_of(step.op_type)) {
        case ShapeRule::later_input_values:
            return all_of_inputs(step, f.value_fixed, 1);
        case ShapeRule::all_input_values:
            return all_of_inputs(step, f.value_fixed, 0);
        case ShapeRule::data:
            return false;
        default:
            return true;
    }
}

}  // namespace

std::vector<std::size_t> fixed_shape_outputs(std::size_t slot_count, std::span<const std::size_t> known,
                                             std::span<const std::size_t> graph_inputs,
                                             std::span<const StepSlots> steps) {
    Flags f{std::vector<bool>(slot_count, false), std::vector<bool>(slot_count, false)};
    for (const std::size_t slot : known) f.shape_fixed[slot] = f.value_fixed[slot] = true;
    for (const std::size_t slot : graph_inputs) f.shape_fixed[slot] = true;
    std::vector<std::size_t> result;
    for (const StepSlots& step : steps) {
        const bool measures_shape = step.op_type == "Shape" || step.op_type == "Size";
        const bool value = measures_shape ? all_of_inputs(step, f.shape_fixed, 0) : all_of_inputs(step, f.value_fixed, 0);
        const bool shape = measures_shape || output_shape_fixed(step, f);
        for (const std::size_t slot : step.outputs) {
            if (slot == kAbsentSlot) continue;
            f.shape_fixed[slot] = shape;
            f.value_fixed[slot] = value;
            if (measures_shape && value) result.push_back(slot);
        }
    }
    return result;
}

}  // namespace inferbench::torch_onnx
