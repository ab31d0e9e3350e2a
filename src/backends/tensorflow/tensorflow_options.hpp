// The options of the TensorFlow backend (plan: backend_options.tensorflow). SDK-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// A graph tensor as TensorFlow names it: "node" (output 0) or "node:index".
struct TensorName {
    std::string node;
    int index = 0;

    std::string text() const;  // "node" for output 0, else "node:index"
    friend bool operator==(const TensorName&, const TensorName&) = default;
};

struct TensorFlowOptions {
    std::vector<TensorName> inputs;   // empty: every Placeholder node of the graph
    std::vector<TensorName> outputs;  // required: a frozen graph does not say which nodes are its outputs
    std::int64_t intra_op_threads = 0;  // 0: TensorFlow's default
    std::int64_t inter_op_threads = 0;
    std::vector<std::string> tags{"serve"};  // the SavedModel MetaGraph to load
};

std::vector<BackendOption> tensorflow_option_list();
TensorFlowOptions parse_tensorflow_options(const OptionMap& options);  // throws UserError

}  // namespace inferbench
