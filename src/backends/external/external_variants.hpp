// The backends built from the external-runner protocol: one variant per runner (and mode), each
// built as its own module from the same source (external_module.cpp, EXTERNAL_BACKEND_NAME).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"
#include "backends/python_scripts.hpp"

namespace inferbench::external {

struct ExternalVariant {
    std::string name;  // the backend's name: "torch-eager"
    std::string description;
    std::string framework;                      // for messages: "PyTorch"
    std::string install_hint;                   // "install python3-torch"
    std::string runner;                         // script in the runners folder; empty: the `command` option
    std::vector<std::string> runner_arguments;  // {"--mode", "eager"}
    std::vector<Precision> precisions;          // the most the runner may offer
    std::vector<std::string> model_formats;
    std::vector<BackendOption> options;
    std::vector<std::string> cuda_only_flags;  // flag options that need a cuda device when true
    bool builds_zoo_models = false;  // and reads PyTorch model specs: given the model's text as it is
    // Its runner reads the plan's input files (the request's "inputs") and says what it fed in its header.
    bool takes_input_files = true;
    // Runs decoder generation only (Capabilities::generates): a model folder, prompts and steps over the command
    // channel (external_protocol's kGenerationCommandFd), never the iteration loop.
    bool generates = false;

    bool uses_python() const { return !runner.empty(); }
};

// Throws std::logic_error for a name no variant has (a build mistake, not a user's).
const ExternalVariant& find_variant(std::string_view name);
const std::vector<ExternalVariant>& all_variants();

// The Python lookups every Python program of inferbench shares (backends/python_scripts).
using inferbench::find_runner;
using inferbench::interpreter_candidates;
using inferbench::runner_search_dirs;

}  // namespace inferbench::external
