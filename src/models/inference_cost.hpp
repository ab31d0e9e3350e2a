// The cost of one inference of an ONNX model file at a batch size, for benchmark records and the
// roofline: the static cost model run once over the whole batch, divided by the batch size.
#pragma once

#include <cstdint>
#include <filesystem>

#include "models/cost_model.hpp"

namespace inferbench::models {

// The static cost model of a file, per node and in total, for the whole batch it runs.
struct BatchCost {
    ModelCost cost;
    std::int64_t batch = 1;  // the file's fixed batch where it has one, else the batch size asked for
};

// Throws UserError / EnvironmentError for unreadable files or shapes that cannot be inferred.
BatchCost batch_cost(const std::filesystem::path& onnx_file, std::int64_t batch_size);

struct InferenceCost {
    std::int64_t parameters = 0;
    double macs = 0;   // per inference (sample)
    double flops = 0;  // per inference; 1 MAC = 2 FLOPs
    double bytes = 0;  // weights / batch + activations read and written per sample
    std::int64_t unknown_nodes = 0;  // nodes the cost model could not cost (counted as 0): lower bounds
    std::int64_t data_dependent_nodes = 0;  // nodes costed at their largest data-dependent sizes: upper bounds
};

// Throws UserError / EnvironmentError for unreadable files or shapes that cannot be inferred.
InferenceCost inference_cost(const std::filesystem::path& onnx_file, std::int64_t batch_size);

}  // namespace inferbench::models
