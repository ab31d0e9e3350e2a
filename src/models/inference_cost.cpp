#include "models/inference_cost.hpp"

#include <algorithm>

#include "models/cost_model.hpp"
#include "models/onnx_reader.hpp"
#include "models/shape_inference.hpp"

namespace inferbench::models {

BatchCost batch_cost(const std::filesystem::path& onnx_file, std::int64_t batch_size) {
    const auto model = onnx::read_onnx_file(onnx_file);
    ShapeInferenceOptions options;
    options.batch = std::max<std::int64_t>(batch_size, 1);
    const auto shapes = infer_shapes(model, options);
    BatchCost result{estimate_cost(model, shapes), *options.batch};
    // A model exported with a fixed batch runs that batch whatever was asked.
    for (const auto& input : model.graph.inputs) {
        const bool weight = std::any_of(model.graph.initializers.begin(), model.graph.initializers.end(),
                                        [&](const onnx::OnnxTensor& t) { return t.name == input.name; });
        if (weight) continue;
        if (const ValueShape* shape = shapes.find(input.name); shape && !shape->dims.empty() && shape->dims[0] > 0)
            result.batch = shape->dims[0];
        break;
    }
    return result;
}

InferenceCost inference_cost(const std::filesystem::path& onnx_file, std::int64_t batch_size) {
    const BatchCost whole = batch_cost(onnx_file, batch_size);
    const ModelCost& cost = whole.cost;
    const std::int64_t batch = whole.batch;
    // Divided by the batch the file runs, which is not the one asked for where the file fixes it.
    const auto per_sample = [&](std::int64_t total) { return static_cast<double>(total) / static_cast<double>(batch); };
    InferenceCost result;
    result.parameters = cost.totals.parameters;
    result.macs = per_sample(cost.totals.macs);
    result.flops = per_sample(cost.totals.flops);
    result.bytes = per_sample(cost.totals.bytes_read + cost.totals.bytes_written);
    result.unknown_nodes = cost.totals.unknown_nodes;
    result.data_dependent_nodes = cost.totals.data_dependent_nodes;
    return result;
}

}  // namespace inferbench::models
