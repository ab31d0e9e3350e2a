// PyTorch model specs as a plan names them: `torchvision:NAME`, `timm:NAME`, `hf:NAME` and
// `python:PATH.py:FACTORY` (runners/model_specs.py reads them into nn.Modules). Here only their syntax:
// whether a model text is a spec, and what is wrong with one, checked where the plan is read.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace inferbench {

inline constexpr std::string_view kModelSpecLibraries[] = {"torchvision", "timm", "hf", "python"};

// "library:..." with a library of kModelSpecLibraries (well formed or not); not a zoo name or a file.
bool is_model_spec(std::string_view text);
// Text of the form "word:rest" whose word is no library inferbench knows: looks like a spec, is not one.
bool looks_like_model_spec(std::string_view text);
// A model a running server serves, by the name its API knows it under: `served:NAME` (the openai backend's
// cells; NAME is sent as the request's "model"). Not a PyTorch spec: no backend but openai runs one.
inline constexpr std::string_view kServedModelPrefix = "served:";
bool is_served_model(std::string_view text);
// NAME of served:NAME (empty for any other text).
std::string_view served_model_name(std::string_view text);

// What is wrong with a spec's syntax (an unknown library, a missing name, python: without FILE.py:FACTORY, a
// factory file that does not exist), with how to write it; nothing when it is well formed.
std::optional<std::string> model_spec_problem(std::string_view text);

}  // namespace inferbench
