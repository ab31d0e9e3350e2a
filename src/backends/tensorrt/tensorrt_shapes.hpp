// The shapes a TensorRT engine is built and run with. SDK-free.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace inferbench {

// A dynamic (-1) first dimension becomes the batch size. Any other dynamic dimension, a fixed first
// dimension that differs from the batch size, or no dimensions at all for batch > 1 is a runtime_error
// naming the tensor and the model and saying how to export it instead.
std::vector<std::int64_t> resolve_batch(std::vector<std::int64_t> shape, std::int64_t batch, std::string_view tensor,
                                        std::string_view model);

// The first dimension of an input is dynamic: it needs an optimisation profile.
bool has_dynamic_batch(const std::vector<std::int64_t>& declared_shape);

}  // namespace inferbench
