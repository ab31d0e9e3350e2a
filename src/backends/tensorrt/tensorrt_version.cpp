#include "backends/tensorrt/tensorrt_version.hpp"

#include <charconv>

#include <fmt/format.h>

namespace inferbench {
namespace {

// The oldest encoding of TensorRT 10 (10.0.0); 9.x and older used major * 1000.
constexpr std::int32_t kTenThousandsEncodingFrom = 100000;
constexpr int kMaxComponents = 4;

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string_view trimmed(std::string_view text) {
    while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
    while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
    return text;
}

// One run of digits ending at a dot or the end of `text`; advances `text` past the dot.
std::optional<int> next_component(std::string_view& text) {
    const std::size_t dot = text.find('.');
    const std::string_view digits = text.substr(0, dot);
    if (digits.empty() || digits.size() > 6) return std::nullopt;
    int value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
    text = dot == std::string_view::npos ? std::string_view() : text.substr(dot + 1);
    if (dot != std::string_view::npos && text.empty()) return std::nullopt;  // "10."
    return value;
}

}  // namespace

TensorRtVersion decode_tensorrt_version(std::int32_t encoded) {
    if (encoded >= kTenThousandsEncodingFrom) return {encoded / 10000, encoded / 100 % 100, encoded % 100};
    return {encoded / 1000, encoded / 100 % 10, encoded % 100};
}

std::string to_string(const TensorRtVersion& version) {
    return fmt::format("{}.{}.{}", version.major, version.minor, version.patch);
}

std::optional<TensorRtVersion> parse_tensorrt_version(std::string_view text) {
    text = trimmed(text);
    int parts[kMaxComponents] = {0, 0, 0, 0};
    int count = 0;
    while (!text.empty()) {
        if (count == kMaxComponents) return std::nullopt;
        const auto value = next_component(text);
        if (!value) return std::nullopt;
        parts[count++] = *value;
    }
    if (count < 2) return std::nullopt;  // "10" alone is too little to be a version
    return TensorRtVersion{parts[0], parts[1], parts[2]};
}

bool newer_than_known(const TensorRtVersion& version) { return version.major > kNewestKnownTensorRt.major; }

std::optional<std::string> unknown_version_problem(const TensorRtVersion& version, std::string_view source) {
    if (!newer_than_known(version)) return std::nullopt;
    return fmt::format(
        "TensorRT {} ({}) is newer than the newest major version this inferbench knows ({}.x): how it "
        "takes a precision is unknown, so nothing is built with it; use TensorRT {}.x or older, or an "
        "inferbench that knows TensorRT {}",
        to_string(version), source, kNewestKnownTensorRt.major, kNewestKnownTensorRt.major, version.major);
}

std::string_view to_string(PrecisionRoute route) {
    switch (route) {
        case PrecisionRoute::builder_flags:
            return "builder flags";
        case PrecisionRoute::typed_onnx:
            return "precision-typed ONNX, strongly typed build";
    }
    return "?";
}

PrecisionRoute precision_route(const TensorRtVersion& version) {
    return version.major >= kStronglyTypedOnlyFrom ? PrecisionRoute::typed_onnx : PrecisionRoute::builder_flags;
}

}  // namespace inferbench
