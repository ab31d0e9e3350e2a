#include "backends/python_scripts.hpp"

#include <cstdlib>

namespace inferbench {
namespace {

std::filesystem::path executable_dir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::current_path() : exe.parent_path();
}

}  // namespace

std::vector<std::string> interpreter_candidates(const std::string& python_option) {
    if (!python_option.empty()) return {python_option};
    return {"python3", "/usr/bin/python3"};
}

std::vector<std::filesystem::path> runner_search_dirs() {
    std::vector<std::filesystem::path> dirs;
    if (const char* env = std::getenv("INFERBENCH_RUNNER_DIR"); env && *env) dirs.emplace_back(env);
    const auto exe_dir = executable_dir();
    dirs.push_back(exe_dir / "runners");
    dirs.push_back(exe_dir.parent_path() / "share" / "inferbench" / "runners");
    return dirs;
}

std::optional<std::filesystem::path> find_runner(std::string_view script) {
    for (const auto& dir : runner_search_dirs()) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(dir / script, ec)) return dir / script;
    }
    return std::nullopt;
}

}  // namespace inferbench
