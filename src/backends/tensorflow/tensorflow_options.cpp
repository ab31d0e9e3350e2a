#include "backends/tensorflow/tensorflow_options.hpp"

#include <string_view>

#include <fmt/format.h>

#include "backends/options.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

constexpr int kMaxTensorIndex = 65535;

TensorName parse_tensor_name(const OptionReader& read, std::string_view option, std::string_view item) {
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos) return {std::string(item), 0};
    const auto index = parse_int(item.substr(colon + 1));
    const std::string_view node = trim(item.substr(0, colon));
    if (!index || *index < 0 || *index > kMaxTensorIndex || node.empty())
        read.reject(option, item, "node or node:index, comma-separated");
    return {std::string(node), static_cast<int>(*index)};
}

std::vector<TensorName> read_tensor_names(const OptionReader& read, std::string_view option) {
    std::vector<TensorName> names;
    for (const std::string& item : read.list(option)) names.push_back(parse_tensor_name(read, option, item));
    return names;
}

}  // namespace

std::string TensorName::text() const { return index == 0 ? node : fmt::format("{}:{}", node, index); }

std::vector<BackendOption> tensorflow_option_list() {
    return {
        {"inputs", "", "tensors to feed, comma-separated node[:index]; empty: every Placeholder node",
         OptionType::list},
        {"outputs", "", "tensors to fetch, comma-separated node[:index] (required: a graph does not name its outputs)",
         OptionType::list},
        {"intra_op_threads", "0", "threads inside one operator; 0: TensorFlow's default", OptionType::count},
        {"inter_op_threads", "0", "threads running independent operators; 0: TensorFlow's default", OptionType::count},
        {"tags", "serve", "SavedModel: the tag-set of the MetaGraph to load, comma-separated", OptionType::list},
    };
}

TensorFlowOptions parse_tensorflow_options(const OptionMap& options) {
    const OptionReader read("tensorflow", options, tensorflow_option_list());
    TensorFlowOptions parsed;
    parsed.inputs = read_tensor_names(read, "inputs");
    parsed.outputs = read_tensor_names(read, "outputs");
    parsed.intra_op_threads = read.count("intra_op_threads");
    parsed.inter_op_threads = read.count("inter_op_threads");
    parsed.tags = read.list("tags", 1);
    return parsed;
}

}  // namespace inferbench
