#include "backends/trtexec/trtexec_version.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>


namespace inferbench::trtexec {
namespace {

constexpr std::array<std::string_view, 7> kRemovedIn11 = {"--fp16", "--bf16", "--int8", "--fp8",
                                                          "--int4", "--best", "--calib"};

}  // namespace

std::span<const std::string_view> flags_removed_in_11() { return kRemovedIn11; }

std::optional<std::string_view> removed_flag(std::string_view arg) {
    const std::string_view key = arg.substr(0, arg.find('='));
    const auto* found = std::find(kRemovedIn11.begin(), kRemovedIn11.end(), key);
    if (found == kRemovedIn11.end()) return std::nullopt;
    return *found;
}

std::vector<std::string> removed_flags(const std::vector<std::string>& args) {
    std::vector<std::string> found;
    for (const auto& arg : args) {
        if (const auto flag = removed_flag(arg)) found.emplace_back(*flag);
    }
    return found;
}

std::optional<std::string> removed_flags_problem(const std::vector<std::string>& args, const TensorRtVersion& version) {
    if (precision_route(version) != PrecisionRoute::typed_onnx) return std::nullopt;
    const auto removed = removed_flags(args);
    if (removed.empty()) return std::nullopt;
    return fmt::format("backend_options.trtexec.extra_args holds {}, which trtexec {} refuses: {}; remove it",
                       removed.front(), to_string(version), removed_flag_reason(removed.front()));
}

std::string removed_flag_reason(std::string_view flag) {
    const bool quantization = flag == "--int8" || flag == "--fp8" || flag == "--int4" || flag == "--calib";
    return fmt::format("{} was removed in TensorRT {} (every network is strongly typed: the precision comes from the "
                       "ONNX file's {})",
                       flag, kStronglyTypedOnlyFrom, quantization ? "Q/DQ nodes" : "types");
}

}  // namespace inferbench::trtexec
