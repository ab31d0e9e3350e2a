// The ONNX Runtime library the backend runs: opened at run time (dlopen), not linked, so that one
// module runs the bundled CPU build, a user's own build (a GPU build, pip onnxruntime-gpu's capi/
// folder) or the one provisioned at build time, and says which. The C++ API is initialised by hand
// (ORT_API_MANUAL_INIT) with the API table of the library opened.
#pragma once

#include <onnxruntime_cxx_api.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace inferbench {

// Where a runtime was asked for, in the order asked: the backend option, the environment, the
// module's own folder (a bundle), the library the build was configured with.
struct RuntimeCandidate {
    std::filesystem::path location;  // a library file or a folder holding one
    std::string origin;              // "backend option runtime", "INFERBENCH_ONNXRUNTIME_ROOT", ...
};

// The candidates for `option` (the backend option runtime; empty: not given) and `env_root` (the
// environment variable; empty: unset), then the bundle's folders next to `module_dir` and `built_with`.
// An explicit location (option, environment) is the only candidate when given: a wrong one is an error,
// never silently replaced by another runtime.
std::vector<RuntimeCandidate> runtime_candidates(std::string_view option, std::string_view env_root,
                                                 const std::filesystem::path& module_dir,
                                                 const std::filesystem::path& built_with);

// The ONNX Runtime library at `location`: the file itself, or in the folder (or its lib/, lib64/)
// libonnxruntime.so.1, libonnxruntime.so or a versioned libonnxruntime.so.1.x.y. Nothing when none is there.
std::optional<std::filesystem::path> find_runtime_library(const std::filesystem::path& location);

class OrtRuntime {
public:
    // The runtime for the backend option `option` (empty: the default search). Opened once per library
    // and kept for the process. Throws EnvironmentError naming what was looked for and how to fix it.
    static const OrtRuntime& open(std::string_view option);

    const std::filesystem::path& library() const { return library_; }
    const std::string& origin() const { return origin_; }
    const std::string& version() const { return version_; }
    // "1.29.0 (/path/libonnxruntime.so.1, bundled)": what the benchmark stores as the backend version.
    std::string description() const;
    // The library's folder, where its execution-provider libraries are found.
    std::filesystem::path folder() const { return library_.parent_path(); }

    // Makes this runtime the one the C++ API calls; every backend entry point calls it first.
    void use() const;
    // The process's ONNX Runtime environment of this runtime, kept for the process (execution-provider
    // libraries are registered with it once).
    Ort::Env& env() const;

private:
    OrtRuntime(std::filesystem::path library, std::string origin, void* handle);

    std::filesystem::path library_;
    std::string origin_;
    std::string version_;
    const OrtApi* api_ = nullptr;
    mutable Ort::Env* env_ = nullptr;  // created on first use, never destroyed
};

}  // namespace inferbench
