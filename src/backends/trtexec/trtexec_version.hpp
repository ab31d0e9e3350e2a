// What each generation of trtexec takes on its command line. TensorRT 7 to 10 choose a build's precision
// with flags (--fp16, --int8, ...); TensorRT 11 builds every network strongly typed, takes the precision
// from the ONNX file's own types, and refuses those flags ("Unknown option: --fp16", then exit 1).
// --stronglyTyped is always on there: trtexec 11 still accepts the flag as a no-op.
// Read from NVIDIA's "Migrating trtexec Usage from TensorRT 10.x to 11.x" and trtexec 11.1's own options.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/tensorrt/tensorrt_platform.hpp"

namespace inferbench::trtexec {

// The first major version whose trtexec builds strongly typed only, and the newest one whose command
// lines and log lines this build knows.
inline constexpr int kStronglyTypedMajor = 11;
inline constexpr int kNewestKnownMajor = 11;

// "10.9.0", "11.0.0.12" (the build number ignored) -> the version; nothing for other text.
std::optional<TensorRtVersion> parse_version_text(std::string_view text);

bool builds_strongly_typed(const TensorRtVersion& version);

// One line when `version` is newer than this build knows (its flags and log lines may have changed, so
// nothing is guessed), else nothing. `what` names where the version came from ("trtexec at /usr/bin/trtexec").
std::optional<std::string> newer_than_known(const TensorRtVersion& version, std::string_view what);

// The flags TensorRT 11 removed: the precision flags and the int8 calibration cache.
std::span<const std::string_view> flags_removed_in_11();

// The flag (without its "=value") when `arg` is one trtexec 11 removed, else nothing.
std::optional<std::string_view> removed_flag(std::string_view arg);

// The removed flags among `args`, in their order.
std::vector<std::string> removed_flags(const std::vector<std::string>& args);

// "--fp16 was removed in TensorRT 11 (every network is strongly typed; the precision comes from the ONNX
// file's types)": why trtexec 11 refuses the flag.
std::string removed_flag_reason(std::string_view flag);

}  // namespace inferbench::trtexec
