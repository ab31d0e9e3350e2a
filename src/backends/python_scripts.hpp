// The Python programs inferbench ships in runners/ (the external runners, torch_export.py) and the
// interpreters it tries for them: one lookup for the external backends and for the model-spec export.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// The interpreters to try, in order: `python_option` alone when set, else python3 on PATH, then Debian's
// /usr/bin/python3 (on machines where PATH's python3 is a pyenv or venv without the framework).
std::vector<std::string> interpreter_candidates(const std::string& python_option);

// Where runner scripts are looked for: $INFERBENCH_RUNNER_DIR, <executable dir>/runners (build tree),
// <executable dir>/../share/inferbench/runners (install tree).
std::vector<std::filesystem::path> runner_search_dirs();
std::optional<std::filesystem::path> find_runner(std::string_view script);

}  // namespace inferbench
