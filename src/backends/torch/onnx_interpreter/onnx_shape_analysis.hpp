// Which values of a program depend only on the shapes of its inputs and on constants, for
// OnnxProgram::specialize(): with the input shapes fixed, those are constants too.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace inferbench::torch_onnx {

// A step as the analysis sees it: its operator and the slots it reads and writes (kAbsentSlot for
// an optional input or output left out).
struct StepSlots {
    std::string_view op_type;
    std::span<const std::size_t> inputs;
    std::span<const std::size_t> outputs;
};

inline constexpr std::size_t kAbsentSlot = static_cast<std::size_t>(-1);

// The output slots of Shape and Size steps whose input's shape is fixed once the graph inputs'
// shapes are: it follows from the input shapes through operators whose output shape depends on
// their inputs' shapes only, or also on values that are themselves fixed (a Reshape's target
// computed from other shapes). Values after NonZero, NonMaxSuppression or a Reshape to a
// data-dependent shape are not. `known`: the slots with a value at load (constants).
std::vector<std::size_t> fixed_shape_outputs(std::size_t slot_count, std::span<const std::size_t> known,
                                             std::span<const std::size_t> graph_inputs,
                                             std::span<const StepSlots> steps);

}  // namespace inferbench::torch_onnx
