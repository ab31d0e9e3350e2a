// Seeded random input tensors of a model's declared shapes and types (untimed, before warm-up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// Floats are uniform in [-1, 1). Integer inputs are treated as token ids in [0, 1000), except
// inputs named like masks (all ones) or segment/type ids (0 or 1), so BERT-style models get
// valid values. The same seed always gives the same bytes.
// Inputs of these shapes take at most kMaxTensorBytes each and together (core/tensor_size): their total bytes,
// or a UserError naming the input and its shape. make_random_inputs checks first, as every source of inputs does.
std::size_t check_input_sizes(const std::vector<TensorInfo>& infos);

std::vector<HostTensor> make_random_inputs(const std::vector<TensorInfo>& infos, std::uint64_t seed);

}  // namespace inferbench
