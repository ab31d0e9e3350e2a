#include "backends/batch_shape.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {
namespace {

std::string symbol_of(const DeclaredShape& declared, std::size_t d) {
    if (d >= declared.symbols.size() || declared.symbols[d].empty()) return {};
    return fmt::format(" ('{}')", declared.symbols[d]);
}

}  // namespace

std::vector<std::int64_t> resolve_batch_shape(const DeclaredShape& declared, std::int64_t batch, std::string_view model,
                                              std::string_view input, std::string_view other_fix) {
    std::vector<std::int64_t> shape = declared.dims;
    if (shape.empty()) return shape;
    for (std::size_t d = 1; d < shape.size(); ++d) {
        if (shape[d] >= 0) continue;
        throw UserError(fmt::format(
            "input {} of model {} has a dynamic dimension {}{}; only the first (batch) dimension may be dynamic, "
            "so export the model with static shapes for the others{}",
            input, model, d, symbol_of(declared, d), other_fix.empty() ? "" : fmt::format(", or {}", other_fix)));
    }
    if (shape[0] < 0) {
        shape[0] = batch;
    } else if (shape[0] != batch) {
        throw UserError(fmt::format(
            "input {} of model {} has a fixed batch size of {}; to run batch size {}, export the model with a "
            "dynamic first (batch) dimension",
            input, model, shape[0], batch));
    }
    element_count_or_throw(fmt::format("input {} of model {}", input, model), shape);
    return shape;
}

std::vector<std::int64_t> resolve_batch_shape(std::span<const std::int64_t> declared, std::int64_t batch,
                                              std::string_view model, std::string_view input,
                                              std::string_view other_fix) {
    return resolve_batch_shape(DeclaredShape{{declared.begin(), declared.end()}, {}}, batch, model, input, other_fix);
}

bool has_dynamic_batch(std::span<const std::int64_t> declared) { return !declared.empty() && declared[0] < 0; }

}  // namespace inferbench
