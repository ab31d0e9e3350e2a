// TensorRT's version as inferbench reasons about it, SDK-free (the library backend, trtexec and the log importer
// share it): decoded from getInferLibVersion()'s number or read from text ("10.8.0", "11.0.0.12"), compared,
// checked against the newest major version this build knows the rules of, and the rule that follows from the
// major version: how a reduced precision is asked for. TensorRT 10 and older take precision builder flags
// (weak typing: fp16/int8/... kernels allowed, fp32 fallback); TensorRT 11 removed those flags and builds every
// network strongly typed, so the precision must be written into the ONNX file itself (tensorrt_typed_onnx.hpp).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferbench {

struct TensorRtVersion {
    int major = 0;
    int minor = 0;
    int patch = 0;

    friend auto operator<=>(const TensorRtVersion&, const TensorRtVersion&) = default;
};

// getInferLibVersion(): major * 10000 + minor * 100 + patch since TensorRT 10, major * 1000 + minor * 100
// + patch before.
TensorRtVersion decode_tensorrt_version(std::int32_t encoded);
std::string to_string(const TensorRtVersion& version);  // "10.3.0"

// "10.8", "10.8.0", "11.0.0.12" (a fourth, build number is read and dropped), surrounding blanks allowed;
// nothing for any other text.
std::optional<TensorRtVersion> parse_tensorrt_version(std::string_view text);

// The newest TensorRT whose rules this build knows. Rules change with the major version only (NVIDIA removes
// APIs and flags at major releases), so a newer minor of a known major is used as that major; a newer major
// is refused rather than guessed at.
inline constexpr TensorRtVersion kNewestKnownTensorRt{11, 5, 0};

bool newer_than_known(const TensorRtVersion& version);
// One line for a version newer_than_known(), naming where it was read ("libnvinfer", "trtexec --version",
// "the log's header"); nothing for a known one.
std::optional<std::string> unknown_version_problem(const TensorRtVersion& version, std::string_view source);

// How a precision other than fp32 reaches TensorRT.
enum class PrecisionRoute {
    builder_flags,  // TensorRT <= 10: BuilderFlag::kFP16 ... on the config, trtexec --fp16 --int8 ...
    typed_onnx,     // TensorRT >= 11: a precision-typed ONNX file, built strongly typed
};
std::string_view to_string(PrecisionRoute route);

// The major version at which the precision builder flags were removed.
inline constexpr int kStronglyTypedOnlyFrom = 11;

PrecisionRoute precision_route(const TensorRtVersion& version);

}  // namespace inferbench
