// Shell completion, derived from the command line's own definition (CLI11) and the plan's settings table,
// so that it never offers a command, flag or plan key that does not exist.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

namespace inferbench::cli {

// A bash completion script for `app`: its commands and their subcommands, each command's flags, the plan
// keys after --set (as KEY=), and file names wherever a word is neither (positional files, option values).
std::string bash_completion(const CLI::App& app, std::span<const std::string_view> plan_keys);

}  // namespace inferbench::cli
