#include "backends/tensorflow/tensorflow_options.hpp"

#include <fmt/format.h>

#include "backends/options.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

TensorName parse_tensor_name(std::string_view option, std::string_view item) {
    const auto colon = item.rfind(':');
    if (colon == std::string_view::npos) return {std::string(item), 0};
    const auto index = parse_int(item.substr(colon + 1));
    const std::string_view node = trim(item.substr(0, colon));
    if (!index || *index < 0 || *index > 65535 || node.empty())
        throw UserError(fmt::format("tensorflow option {}: '{}' is not a tensor name (use node or node:index)", option, item));
    return {std::string(node), static_cast<int>(*index)};
}

}  // namespace

std::string TensorName::text() const { return index == 0 ? node : fmt::format("{}:{}", node, index); }

std::vector<BackendOption> tensorflow_option_list() {
    return {
        {"inputs", "", "tensors to feed, comma-separated node[:index]; empty: every Placeholder node"},
        {"outputs", "", "tensors to fetch, comma-separated node[:index] (required: a graph does not name its outputs)"},
        {"intra_op_threads", "0", "threads inside one operator; 0: TensorFlow's default"},
        {"inter_op_threads", "0", "threads running independent operators; 0: TensorFlow's default"},
        {"tags", "serve", "SavedModel: the tag-set of the MetaGraph to load, comma-separated"},
    };
}

std::vector<TensorName> parse_tensor_names(std::string_view option, std::string_view text) {
    std::vector<TensorName> names;
    if (trim(text).empty()) return names;
    for (const std::string& item : split_list(text)) {
        if (item.empty())
            throw UserError(fmt::format("tensorflow option {}: '{}' has an empty name in its list", option, text));
        names.push_back(parse_tensor_name(option, item));
    }
    return names;
}

TensorFlowOptions parse_tensorflow_options(const OptionMap& options) {
    const OptionReader read("tensorflow", options, tensorflow_option_list());
    TensorFlowOptions parsed;
    parsed.inputs = parse_tensor_names("inputs", read.text("inputs"));
    parsed.outputs = parse_tensor_names("outputs", read.text("outputs"));
    parsed.intra_op_threads = read.count("intra_op_threads");
    parsed.inter_op_threads = read.count("inter_op_threads");
    parsed.tags.clear();
    for (const std::string& tag : split_list(read.text("tags"))) {
        if (tag.empty()) throw UserError("tensorflow option tags: give one or more tags, comma-separated (e.g. serve)");
        parsed.tags.push_back(tag);
    }
    return parsed;
}

}  // namespace inferbench
