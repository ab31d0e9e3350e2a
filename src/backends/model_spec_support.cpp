#include "backends/model_spec_support.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/plan/model_spec.hpp"
#include "core/units.hpp"

namespace inferbench {
namespace {

bool reads(const Capabilities& caps, std::string_view format) {
    return std::find(caps.model_formats.begin(), caps.model_formats.end(), format) != caps.model_formats.end();
}

}  // namespace

std::string spec_export_format(const Capabilities& caps) {
    if (reads(caps, "onnx")) return "onnx";
    if (reads(caps, "pt")) return "torchscript";
    return {};
}

std::optional<std::string> model_spec_refusal(const std::string& backend, const Capabilities& caps,
                                              const BenchmarkSpec& spec) {
    if (!is_model_spec(spec.model) || caps.builds_zoo_models || !spec_export_format(caps).empty()) return std::nullopt;
    return fmt::format("backend {} runs {} files; a PyTorch model spec runs on torch-eager, torch-compile, "
                       "torch-aoti and on backends that read ONNX or TorchScript files",
                       backend, join(caps.model_formats, ", "));
}

}  // namespace inferbench
