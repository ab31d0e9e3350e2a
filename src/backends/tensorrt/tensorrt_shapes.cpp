#include "backends/tensorrt/tensorrt_shapes.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace inferbench {

std::vector<std::int64_t> resolve_batch(std::vector<std::int64_t> shape, std::int64_t batch, std::string_view tensor,
                                        std::string_view model) {
    if (shape.empty()) {
        if (batch == 1) return shape;
        throw std::runtime_error(fmt::format("input {} of model {} is a scalar; it has no batch dimension for batch "
                                             "size {}",
                                             tensor, model, batch));
    }
    for (std::size_t d = 1; d < shape.size(); ++d) {
        if (shape[d] < 0)
            throw std::runtime_error(fmt::format(
                "input {} of model {} has a dynamic dimension {}; only the first (batch) dimension may be dynamic, "
                "so export the model with static shapes for the others",
                tensor, model, d));
    }
    if (shape[0] < 0) {
        shape[0] = batch;
    } else if (shape[0] != batch) {
        throw std::runtime_error(fmt::format("model {} has a fixed batch size of {} (input {}); export it with a "
                                             "dynamic batch dimension to run batch size {}",
                                             model, shape[0], tensor, batch));
    }
    return shape;
}

bool has_dynamic_batch(const std::vector<std::int64_t>& declared_shape) {
    return !declared_shape.empty() && declared_shape[0] < 0;
}

}  // namespace inferbench
