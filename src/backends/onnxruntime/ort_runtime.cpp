#include "backends/onnxruntime/ort_runtime.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"

#ifndef INFERBENCH_ORT_BUILT_WITH
#define INFERBENCH_ORT_BUILT_WITH ""
#endif

namespace inferbench {
namespace {

constexpr std::string_view kEnvRoot = "INFERBENCH_ONNXRUNTIME_ROOT";

// The folder of the file this code was linked into: the backend module (or a test executable).
std::filesystem::path own_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<const void*>(&own_folder), &info) == 0 || info.dli_fname == nullptr) return {};
    std::error_code ec;
    const auto path = std::filesystem::canonical(info.dli_fname, ec);
    return ec ? std::filesystem::path() : path.parent_path();
}

std::optional<std::filesystem::path> library_in(const std::filesystem::path& folder) {
    std::error_code ec;
    for (const char* name : {"libonnxruntime.so.1", "libonnxruntime.so"})
        if (std::filesystem::is_regular_file(folder / name, ec)) return folder / name;
    std::vector<std::filesystem::path> versioned;  // a wheel's capi/ holds only libonnxruntime.so.1.x.y
    for (const auto& item : std::filesystem::directory_iterator(folder, ec))
        if (item.path().filename().string().starts_with("libonnxruntime.so.1.")) versioned.push_back(item.path());
    if (versioned.empty()) return std::nullopt;
    std::sort(versioned.begin(), versioned.end());
    return versioned.back();
}

}  // namespace

std::vector<RuntimeCandidate> runtime_candidates(std::string_view option, std::string_view env_root,
                                                 const std::filesystem::path& module_dir,
                                                 const std::filesystem::path& built_with) {
    if (!option.empty()) return {{std::filesystem::path(option), "backend option runtime"}};
    if (!env_root.empty()) return {{std::filesystem::path(env_root), std::string(kEnvRoot)}};
    std::vector<RuntimeCandidate> candidates;
    if (!module_dir.empty()) {
        candidates.push_back({module_dir, "bundled"});
        candidates.push_back({module_dir.parent_path() / "lib", "bundled"});
    }
    if (!built_with.empty()) candidates.push_back({built_with, "built with"});
    return candidates;
}

std::optional<std::filesystem::path> find_runtime_library(const std::filesystem::path& location) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(location, ec)) return location;
    if (!std::filesystem::is_directory(location, ec)) return std::nullopt;
    for (const auto& folder : {location, location / "lib", location / "lib64"})
        if (auto found = library_in(folder)) return found;
    return std::nullopt;
}

OrtRuntime::OrtRuntime(std::filesystem::path library, std::string origin, void* handle)
    : library_(std::move(library)), origin_(std::move(origin)) {
    using GetApiBase = const OrtApiBase* (*)();
    const auto get_api_base = reinterpret_cast<GetApiBase>(dlsym(handle, "OrtGetApiBase"));
    if (get_api_base == nullptr)
        throw EnvironmentError(fmt::format("{} is not ONNX Runtime (no OrtGetApiBase symbol); point the onnxruntime "
                                           "option runtime or {} at an ONNX Runtime library or folder",
                                           library_.string(), kEnvRoot));
    const OrtApiBase* base = get_api_base();
    version_ = base->GetVersionString();
    // The C++ API is initialised by hand (ORT_API_MANUAL_INIT) so that an ONNX Runtime older than the
    // headers gives this message instead of a null pointer dereference.
    api_ = base->GetApi(ORT_API_VERSION);
    if (api_ == nullptr)
        throw EnvironmentError(fmt::format(
            "ONNX Runtime {} ({}) is older than the headers inferbench was built with (API version {}); "
            "use ONNX Runtime 1.{} or newer",
            version_, library_.string(), ORT_API_VERSION, ORT_API_VERSION));
}

const OrtRuntime& OrtRuntime::open(std::string_view option) {
    static std::mutex mutex;
    static std::map<std::filesystem::path, std::unique_ptr<OrtRuntime>> opened;  // kept for the process
    const char* env = std::getenv(kEnvRoot.data());
    const auto candidates = runtime_candidates(option, env != nullptr ? env : "", own_folder(), INFERBENCH_ORT_BUILT_WITH);
    std::vector<std::string> tried;
    for (const auto& candidate : candidates) {
        const auto library = find_runtime_library(candidate.location);
        if (!library) {
            tried.push_back(candidate.location.string());
            continue;
        }
        std::error_code ec;
        const auto key = std::filesystem::weakly_canonical(*library, ec);
        const std::lock_guard lock(mutex);
        if (auto it = opened.find(key); it != opened.end()) return *it->second;
        // RTLD_GLOBAL: the execution-provider libraries ONNX Runtime loads resolve its symbols.
        void* handle = dlopen(key.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (handle == nullptr)
            throw EnvironmentError(fmt::format("cannot load ONNX Runtime {} ({}): {}", key.string(), candidate.origin,
                                               dlerror()));
        auto runtime = std::unique_ptr<OrtRuntime>(new OrtRuntime(key, candidate.origin, handle));
        return *opened.emplace(key, std::move(runtime)).first->second;
    }
    throw EnvironmentError(fmt::format(
        "no ONNX Runtime library (libonnxruntime.so.1) in {}; run scripts/fetch-onnxruntime.sh, or point the "
        "onnxruntime option runtime or {} at an ONNX Runtime folder or library",
        tried.empty() ? std::string("any folder searched") : fmt::format("{}", fmt::join(tried, ", ")), kEnvRoot));
}

std::string OrtRuntime::description() const { return fmt::format("{} ({}, {})", version_, library_.string(), origin_); }

void OrtRuntime::use() const { Ort::InitApi(api_); }

Ort::Env& OrtRuntime::env() const {
    // Never destroyed: ONNX Runtime's environment outlives every session, and its own statics go at exit.
    static std::mutex mutex;
    const std::lock_guard lock(mutex);
    if (env_ == nullptr) {
        use();
        env_ = new Ort::Env(ORT_LOGGING_LEVEL_WARNING, "inferbench");
    }
    return *env_;
}

}  // namespace inferbench
