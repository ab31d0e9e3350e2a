// Finds backends: the built-in null backend and shared-library modules found at run time
// (libinferbench_backend_NAME.so), each checked for the backend API version it was built for.
// Modules are opened only when a backend is asked for, so a worker loads only its own framework.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

// Whether a backend's default cell runs on one device here.
struct DeviceUsability {
    std::string device;   // "cpu", "cuda:0"
    std::string problem;  // cell_problem()'s answer on that device; empty if usable
};

struct BackendEntry {
    std::string name;
    std::string description;
    std::string origin;   // "built-in", a module path, or "not built"
    std::string problem;  // why it cannot be used here (and how to fix that); empty if usable
    std::string version;  // the backend's own version (which library it runs, where it says so); empty if not created
    std::vector<DeviceUsability> devices;  // its default cell on cpu and on cuda:0; empty if not created
    bool usable() const { return problem.empty(); }
};

// Why a cell cannot run here, or nothing: `backend` is null when the registry could not create it
// (then `create_problem` says why), else the backend judges the cell, and a backend that runs its own
// loop cannot take l2_flush or sync. The one rule of `run` (a cell it skips) and of `list backends`
// (a backend it calls unusable).
std::optional<std::string> cell_problem(const Backend* backend, const std::string& create_problem,
                                        const BenchmarkSpec& spec);

// Why a backend with these capabilities cannot run the cell's scenario, or nothing: a backend that runs
// its own loop runs single_stream only; several streams, and the batcher's instances at several batch
// sizes, need Capabilities::concurrent_instances. Part of cell_problem().
std::optional<std::string> scenario_problem(const Capabilities& caps, const std::string& backend,
                                            const BenchmarkSpec& spec);

// Why a backend with these capabilities cannot run the cell's image pipeline (core/pipeline), or nothing: it must
// take new inputs per batch and hand its outputs back (Capabilities::stages_inputs), run single_stream, and GPU
// stages need a cuda device. Part of cell_problem(); the model's part is runner/worker/pipeline_cell's.
std::optional<std::string> pipeline_problem(const Capabilities& caps, const std::string& backend,
                                            const BenchmarkSpec& spec);

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
    // Opens modules to read their descriptions, and asks each backend about its default cell (see
    // default_cell()) as `run` would: the problem found, if any, is recorded in the entry, and so is the
    // answer for that cell on cpu and on cuda:0.
    std::vector<BackendEntry> entries() const;
    // Throws EnvironmentError with the entry's problem when the backend cannot be used here.
    std::unique_ptr<Backend> create(std::string_view name) const;

private:
    BackendRegistry();
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace inferbench
