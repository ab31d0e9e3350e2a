#include "backends/onnxruntime/onnxruntime_options.hpp"

#include <charconv>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"

namespace inferbench {
namespace {

constexpr std::pair<std::string_view, GraphOptimizationLevel> kOptimizationLevels[] = {
    {"disable", ORT_DISABLE_ALL},
    {"basic", ORT_ENABLE_BASIC},
    {"extended", ORT_ENABLE_EXTENDED},
    {"all", ORT_ENABLE_ALL},
};

constexpr std::pair<std::string_view, ExecutionMode> kExecutionModes[] = {
    {"sequential", ORT_SEQUENTIAL},
    {"parallel", ORT_PARALLEL},
};

[[noreturn]] void bad_value(std::string_view option, std::string_view value, std::string_view valid) {
    throw UserError(fmt::format("onnxruntime option {}: '{}' is not valid (use {})", option, value, valid));
}

int parse_thread_count(std::string_view option, std::string_view text) {
    int count = -1;
    const char* end = text.data() + text.size();
    auto [stop, ec] = std::from_chars(text.data(), end, count);
    if (ec != std::errc() || stop != end || count < 0)
        bad_value(option, text, "a whole number >= 0; 0 lets ONNX Runtime choose");
    return count;
}

template <typename T, std::size_t N>
T parse_choice(std::string_view option, std::string_view text, const std::pair<std::string_view, T> (&choices)[N]) {
    for (const auto& [name, value] : choices) {
        if (name == text) return value;
    }
    std::string valid;
    for (const auto& [name, value] : choices) valid += fmt::format("{}{}", valid.empty() ? "" : "|", name);
    bad_value(option, text, valid);
}

}  // namespace

std::vector<BackendOption> onnxruntime_option_list() {
    return {
        {"intra_op_threads", "0", "threads used inside one operator; 0 = ONNX Runtime's default (physical cores)"},
        {"inter_op_threads", "0", "threads running independent operators (execution_mode parallel); 0 = default"},
        {"graph_optimization", "all", "graph optimization level: disable|basic|extended|all"},
        {"execution_mode", "sequential", "operator scheduling: sequential|parallel"},
    };
}

OnnxRuntimeOptions parse_onnxruntime_options(const OptionMap& options) {
    OnnxRuntimeOptions parsed;
    for (const auto& [key, value] : options) {
        if (key == "intra_op_threads") {
            parsed.intra_op_threads = parse_thread_count(key, value);
        } else if (key == "inter_op_threads") {
            parsed.inter_op_threads = parse_thread_count(key, value);
        } else if (key == "graph_optimization") {
            parsed.graph_optimization = parse_choice(key, value, kOptimizationLevels);
        } else if (key == "execution_mode") {
            parsed.execution_mode = parse_choice(key, value, kExecutionModes);
        } else {
            throw UserError(fmt::format(
                "unknown onnxruntime option '{}' (valid: intra_op_threads, inter_op_threads, "
                "graph_optimization, execution_mode)",
                key));
        }
    }
    return parsed;
}

}  // namespace inferbench
