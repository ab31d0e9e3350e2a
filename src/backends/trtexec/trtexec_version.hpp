// What each generation of trtexec takes on its command line. TensorRT 7 to 10 choose a build's precision
// with flags (--fp16, --int8, ...); TensorRT 11 builds every network strongly typed, takes the precision
// from the ONNX file's own types, and refuses those flags ("Unknown option: --fp16", then exit 1).
// --stronglyTyped is always on there: trtexec 11 still accepts the flag as a no-op. Which version takes which
// route is backends/tensorrt/tensorrt_version's rule (precision_route); this file holds trtexec's own flags.
// Read from NVIDIA's "Migrating trtexec Usage from TensorRT 10.x to 11.x" and trtexec 11.1's own options.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/tensorrt/tensorrt_version.hpp"

namespace inferbench::trtexec {

// The flags TensorRT 11 removed: the precision flags and the int8 calibration cache.
std::span<const std::string_view> flags_removed_in_11();

// The flag (without its "=value") when `arg` is one trtexec 11 removed, else nothing.
std::optional<std::string_view> removed_flag(std::string_view arg);

// The removed flags among `args`, in their order.
std::vector<std::string> removed_flags(const std::vector<std::string>& args);

// One line when `args` (backend_options.trtexec.extra_args) hold a flag that trtexec `tensorrt_version` refuses;
// nothing for older and unknown versions, which take them all.
std::optional<std::string> removed_flags_problem(const std::vector<std::string>& args, const TensorRtVersion& version);

// "--fp16 was removed in TensorRT 11 (every network is strongly typed; the precision comes from the ONNX
// file's types)": why trtexec 11 refuses the flag.
std::string removed_flag_reason(std::string_view flag);

}  // namespace inferbench::trtexec
