#include "devices/cublaslt_search.hpp"

#include <cstdlib>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/process/subprocess.hpp"

namespace inferbench::devices {
namespace {

constexpr const char* kSonames[] = {"libcublasLt.so.13", "libcublasLt.so.12"};
// Relative to a site-packages folder: CUDA 13 wheels (nvidia-cublas 13), then CUDA 12 wheels (nvidia-cublas-cu12).
constexpr const char* kWheelFiles[] = {"nvidia/cu13/lib/libcublasLt.so.13", "nvidia/cublas/lib/libcublasLt.so.13",
                                       "nvidia/cublas/lib/libcublasLt.so.12"};

bool is_file(const std::filesystem::path& path) {
    std::error_code ec;
    return std::filesystem::is_regular_file(path, ec);
}

std::optional<std::filesystem::path> first_in(const std::vector<std::filesystem::path>& dirs,
                                              std::initializer_list<const char*> names) {
    for (const auto& dir : dirs) {
        for (const char* name : names) {
            if (is_file(dir / name)) return dir / name;
        }
    }
    return std::nullopt;
}

std::vector<std::filesystem::path> split_path(const std::string& text) {
    std::vector<std::filesystem::path> dirs;
    std::stringstream in(text);
    for (std::string item; std::getline(in, item, ':');) {
        if (!item.empty()) dirs.emplace_back(item);
    }
    return dirs;
}

std::vector<std::filesystem::path> python_site_dirs() {
    const CapturedRun run = run_captured(
        {"python3", "-c", "import site; print('\\n'.join(site.getsitepackages() + [site.getusersitepackages()]))"},
        std::nullopt, 10'000);
    if (!run.status.success()) return {};
    return split_path([&] {
        std::string lines = run.out;
        for (char& c : lines) c = c == '\n' ? ':' : c;
        return lines;
    }());
}

}  // namespace

CublasLtChoice find_cublaslt(const CublasLtSearch& search) {
    if (search.env_library) {
        if (!is_file(*search.env_library))
            throw UserError(
                fmt::format("INFERBENCH_CUBLASLT_LIBRARY={}: no such file; point it at a libcublasLt.so.13 "
                            "(or .12), or unset it",
                            *search.env_library));
        return {*search.env_library, "INFERBENCH_CUBLASLT_LIBRARY"};
    }
    if (auto found = first_in(split_path(search.ld_library_path), {kSonames[0], kSonames[1]}))
        return {found->string(), "LD_LIBRARY_PATH"};
    if (search.site_dirs) {
        const auto sites = search.site_dirs();
        for (const char* file : kWheelFiles) {
            if (auto found = first_in(sites, {file})) return {found->string(), "Python site-packages"};
        }
    }
    if (auto found = first_in(search.system_dirs, {kSonames[0], kSonames[1]})) return {found->string(), "CUDA toolkit"};
    return {"", "the dynamic loader (libcublasLt.so.13, then .so.12)"};
}

CublasLtSearch host_cublaslt_search() {
    CublasLtSearch search;
    if (const char* env = std::getenv("INFERBENCH_CUBLASLT_LIBRARY"); env && *env) search.env_library = env;
    if (const char* env = std::getenv("LD_LIBRARY_PATH")) search.ld_library_path = env;
    search.site_dirs = python_site_dirs;
    return search;
}

}  // namespace inferbench::devices
