// Finds backends: the built-in null backend and shared-library modules found at run time
// (libinferbench_backend_NAME.so), each checked for the backend API version it was built for.
// Modules are opened only when a backend is asked for, so a worker loads only its own framework.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

struct BackendEntry {
    std::string name;
    std::string description;
    std::string origin;   // "built-in", a module path, or "not built"
    std::string problem;  // why it cannot be used here (and how to fix that); empty if usable
};

class BackendRegistry {
public:
    // Search order: $INFERBENCH_BACKEND_PATH (colon-separated), <exe dir>/backends,
    // <exe dir>/../lib/inferbench/backends.
    static std::vector<std::filesystem::path> default_search_dirs();
    static BackendRegistry discover(const std::vector<std::filesystem::path>& dirs);

    BackendRegistry(const BackendRegistry&) = delete;
    BackendRegistry& operator=(const BackendRegistry&) = delete;
    BackendRegistry(BackendRegistry&&) noexcept;
    BackendRegistry& operator=(BackendRegistry&&) noexcept;
    ~BackendRegistry();

    // Every backend a plan may name, usable or not (unusable ones are skipped with their problem).
    std::vector<std::string> names() const;
    // Opens modules to read their descriptions; problems found are recorded in the entries.
    std::vector<BackendEntry> entries() const;
    // Throws EnvironmentError with the entry's problem when the backend cannot be used here.
    std::unique_ptr<Backend> create(std::string_view name) const;

private:
    BackendRegistry();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace inferbench
