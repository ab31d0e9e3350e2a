#include "backends/trtexec/trtexec_version.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::trtexec {
namespace {

constexpr std::array<std::string_view, 7> kRemovedIn11 = {"--fp16", "--bf16", "--int8", "--fp8",
                                                          "--int4", "--best", "--calib"};

std::optional<int> version_part(std::string_view part) {
    const auto value = parse_int(part);
    if (!value || *value < 0 || *value > 999) return std::nullopt;
    return static_cast<int>(*value);
}

}  // namespace

std::optional<TensorRtVersion> parse_version_text(std::string_view text) {
    text = trim(text);
    std::array<int, 3> parts{};
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto dot = text.find('.');
        if (dot == std::string_view::npos && i < 2) return std::nullopt;  // "10" or "10.9" say too little
        const auto part = version_part(text.substr(0, dot));
        if (!part) return std::nullopt;
        parts[i] = *part;
        text = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
    }
    if (!text.empty() && !parse_int(text)) return std::nullopt;  // the build number, when given
    return TensorRtVersion{parts[0], parts[1], parts[2]};
}

bool builds_strongly_typed(const TensorRtVersion& version) { return version.major >= kStronglyTypedMajor; }

std::optional<std::string> newer_than_known(const TensorRtVersion& version, std::string_view what) {
    if (version.major <= kNewestKnownMajor) return std::nullopt;
    return fmt::format("{} is TensorRT {}, newer than this inferbench knows (up to {}.x): its command line and log "
                       "may have changed, so nothing is guessed; use a TensorRT {}.x trtexec or a newer inferbench",
                       what, to_string(version), kNewestKnownMajor, kNewestKnownMajor);
}

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

std::string removed_flag_reason(std::string_view flag) {
    const bool quantization = flag == "--int8" || flag == "--fp8" || flag == "--int4" || flag == "--calib";
    return fmt::format("{} was removed in TensorRT {} (every network is strongly typed: the precision comes from the "
                       "ONNX file's {})",
                       flag, kStronglyTypedMajor, quantization ? "Q/DQ nodes" : "types");
}

}  // namespace inferbench::trtexec
