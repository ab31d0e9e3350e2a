// The one rule every backend applies to a model's declared input shapes: the first dimension is the
// batch, the rest must be static, because the harness chooses the batch size and nothing else.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// A declared input shape as a framework reports it: a negative size is a dynamic dimension, with the
// exporter's symbol for it ("batch", "seq") where the format keeps one (empty: none, or not known).
struct DeclaredShape {
    std::vector<std::int64_t> dims;
    std::vector<std::string> symbols;  // empty, or one per dimension
};

// The shape the harness feeds input `input` of `model` at `batch`: a dynamic first dimension becomes
// the batch, a fixed one must equal it, and a scalar (rank 0) is fed as it is, as it has no batch
// dimension. A dynamic dimension after the first, or a fixed batch other than `batch`, is a UserError
// naming the input, the model and the dimension, and saying how to export the model instead.
// `other_fix` is a backend's own way around a dynamic dimension, said after that ("or ...").
std::vector<std::int64_t> resolve_batch_shape(const DeclaredShape& declared, std::int64_t batch, std::string_view model,
                                              std::string_view input, std::string_view other_fix = {});
std::vector<std::int64_t> resolve_batch_shape(std::span<const std::int64_t> declared, std::int64_t batch,
                                              std::string_view model, std::string_view input,
                                              std::string_view other_fix = {});

// The first dimension is dynamic: the framework needs the batch given (an optimisation profile, a shape).
bool has_dynamic_batch(std::span<const std::int64_t> declared);

}  // namespace inferbench
