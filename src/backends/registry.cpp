#include "backends/registry.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <future>
#include <mutex>

#include <fmt/format.h>

#include "backends/null/null_backend.hpp"
#include "backends/openai/openai_backend.hpp"
#include "core/error.hpp"

namespace inferbench {
namespace {

constexpr std::string_view kModulePrefix = "libinferbench_backend_";
constexpr std::string_view kModuleSuffix = ".so";

// Frameworks inferbench knows but whose module may not be built on this machine: what to do then.
struct KnownBackend {
    std::string_view name;
    std::string_view description;
    std::string_view how_to_get;
};

constexpr KnownBackend kKnownBackends[] = {
    {"onnxruntime", "ONNX Runtime (C/C++ API)",
     "run scripts/fetch-onnxruntime.sh, then rebuild (or set INFERBENCH_ONNXRUNTIME_ROOT)"},
    {"torch", "LibTorch (TorchScript, C++)", "install libtorch-dev (or point CMake at a LibTorch), then rebuild"},
    {"torch-aoti", "LibTorch AOTInductor (.pt2 packages, C++)",
     "needs LibTorch >= 2.6 (its AOTIModelPackageLoader; Debian's libtorch-dev 1.13 has none): install PyTorch >= 2.6 "
     "for python3, then rerun scripts/setup.sh, which builds against PyTorch's own LibTorch"},
    {"tensorrt", "TensorRT (C++ API)", "install the TensorRT SDK, then rebuild"},
    {"tensorflow", "TensorFlow (C API, frozen GraphDef)", "install the TensorFlow C library, then rebuild"},
    {"llamacpp", "llama.cpp (C API, GGUF decoder models)",
     "run scripts/fetch-llama-cpp.sh, then rebuild (or set INFERBENCH_LLAMA_CPP_ROOT)"},
};

struct ModuleSlot {
    std::string name;
    std::filesystem::path path;
    void* handle = nullptr;
    const BackendModule* module = nullptr;
    std::string problem;
    bool opened = false;
};

std::filesystem::path executable_dir() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::filesystem::current_path() : exe.parent_path();
}

void open_module(ModuleSlot& slot) {
    if (slot.opened) return;
    slot.opened = true;
    // Modules stay loaded for the life of the process: frameworks do not survive dlclose well.
    slot.handle = dlopen(slot.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!slot.handle) {
        slot.problem = fmt::format("cannot load {}: {}", slot.path.string(), dlerror());
        return;
    }
    auto entry = reinterpret_cast<inferbench_backend_module_fn>(dlsym(slot.handle, INFERBENCH_BACKEND_ENTRY_POINT));
    if (!entry) {
        slot.problem = fmt::format("{} is not an inferbench backend module (no {} symbol)", slot.path.string(),
                                   INFERBENCH_BACKEND_ENTRY_POINT);
        return;
    }
    const BackendModule* module = entry();
    if (!module || module->api_version != kBackendApiVersion) {
        slot.problem = fmt::format("{} was built for backend API {}, this inferbench speaks {}; rebuild the module",
                                   slot.path.string(), module ? module->api_version : 0, kBackendApiVersion);
        return;
    }
    slot.module = module;
}

// The cell `list backends` asks a backend about: its default options, its first device (the CPU where
// it has one), fp32 where it has it, and a zoo model (the null model for a backend that reads none); a
// generative one for a backend that generates and refuses the other (one that runs only decoders).
BenchmarkSpec default_cell(const Backend& backend) {
    const Capabilities caps = backend.capabilities();
    BenchmarkSpec spec;
    spec.backend = backend.name();
    spec.model = caps.needs_model_file ? "" : "null";
    const auto& devices = caps.devices;
    if (!devices.empty() && std::find(devices.begin(), devices.end(), DeviceKind::cpu) == devices.end())
        spec.device = Device{devices.front(), 0};
    const auto& precisions = caps.precisions;
    if (!precisions.empty() && std::find(precisions.begin(), precisions.end(), Precision::fp32) == precisions.end())
        spec.precision = precisions.front();
    if (caps.generates && backend.unsupported_reason(spec)) spec.generation = GenerationSettings{1, 1, Sampling::greedy};
    return spec;
}

// The backend's version and its default cell's answer on each device kind, for `list backends`.
void describe_devices(const Backend& backend, BackendEntry& entry) {
    try {
        entry.version = backend.version();
        for (const Device device : {Device{DeviceKind::cpu, 0}, Device{DeviceKind::cuda, 0}}) {
            BenchmarkSpec spec = default_cell(backend);
            spec.device = device;
            entry.devices.push_back({to_string(device), cell_problem(&backend, "", spec).value_or("")});
        }
    } catch (const std::exception& e) {
        entry.devices.push_back({"", e.what()});
    }
}

// A module's entry: opened, created and asked about its default cell as `run` would ask.
BackendEntry module_entry(ModuleSlot& slot) {
    open_module(slot);
    std::string problem = slot.problem;
    std::unique_ptr<Backend> backend;
    if (slot.module) {
        try {
            backend.reset(slot.module->create());
        } catch (const std::exception& e) {
            problem = e.what();
        }
        problem = cell_problem(backend.get(), problem, backend ? default_cell(*backend) : BenchmarkSpec{}).value_or("");
    }
    BackendEntry entry{slot.name, slot.module ? slot.module->description : "", slot.path.string(), problem, "", {}};
    if (backend) describe_devices(*backend, entry);
    return entry;
}

const KnownBackend* find_known(std::string_view name) {
    for (const auto& known : kKnownBackends) {
        if (known.name == name) return &known;
    }
    return nullptr;
}

}  // namespace

std::optional<std::string> scenario_problem(const Capabilities& caps, const std::string& backend,
                                            const BenchmarkSpec& spec) {
    const ScenarioSettings& scenario = spec.scenario;
    if (caps.runs_own_loop && scenario.scenario != Scenario::single_stream)
        return fmt::format("backend {} runs its own loop (an external tool times the iterations), which is "
                           "single_stream only; scenario {} needs a backend the harness drives",
                           backend, to_string(scenario.scenario));
    if (!caps.concurrent_instances && needs_several_instances(scenario, spec.batch_size)) {
        const std::string why = scenario.streams > 1
                                    ? fmt::format("{} streams", scenario.streams)
                                    : fmt::format("the batcher (an instance per batch size up to {})", spec.batch_size);
        return fmt::format("backend {} cannot run several instances at once in one process, which {} needs; use "
                           "streams: 1{}",
                           backend, why, uses_batcher(scenario) ? " and batch size 1, or no batcher" : "");
    }
    return std::nullopt;
}

std::optional<std::string> pipeline_problem(const Capabilities& caps, const std::string& backend,
                                            const BenchmarkSpec& spec) {
    const PipelineSettings& pipeline = spec.pipeline;
    if (!pipeline.active()) return std::nullopt;
    if (!caps.stages_inputs)
        return fmt::format("backend {} cannot take new inputs before each inference or hand its outputs back, which "
                           "an image pipeline cell needs (each batch is made of new images); run the pipeline on "
                           "onnxruntime or torch",
                           backend);
    if (spec.scenario.scenario != Scenario::single_stream)
        return fmt::format("an image pipeline cell runs its own batches one after another or overlapped "
                           "(pipeline.mode); scenario {} is for cells that run one inference at a time",
                           to_string(spec.scenario.scenario));
    const bool gpu_stage = pipeline.preprocess == StagePlace::gpu || pipeline.postprocess == StagePlace::gpu;
    if (gpu_stage && spec.device.kind != DeviceKind::cuda)
        return fmt::format("pipeline.preprocess/postprocess gpu runs stages on the cell's GPU, and this cell runs on "
                           "{}; use cpu stages on a cpu device",
                           to_string(spec.device));
    if (pipeline.postprocess == StagePlace::gpu)
        return "pipeline.postprocess gpu: the pipeline cell runs post-processing and NMS on the CPU in this version; "
               "use postprocess: cpu";
    return std::nullopt;
}

std::optional<std::string> cell_problem(const Backend* backend, const std::string& create_problem,
                                        const BenchmarkSpec& spec) {
    if (!backend) return create_problem;
    if (auto reason = backend->unsupported_reason(spec)) return reason;
    // The L2 flush runs between the harness's iterations and the sync mode applies to the worker's own
    // CUDA context: neither reaches a tool that runs the iterations in a process of its own. A stopping
    // criterion ends the harness's own loop; such a tool stops by its own duration, so its numbers would
    // not be what the criterion asked for.
    const auto& c = spec.conditions;
    const bool own_loop = backend->capabilities().runs_own_loop;
    if ((c.l2_flush || c.sync != SyncMode::automatic) && own_loop)
        return fmt::format("{} runs its own iterations in a process of its own: l2_flush and sync apply to the "
                           "harness's loop only; set l2_flush: false and sync: auto for this backend",
                           spec.backend);
    if (spec.loop.stop != StopCriterion::fixed && own_loop)
        return fmt::format("the {} backend runs its own measured loop, which stop: {} cannot end; use stop: fixed "
                           "for it",
                           spec.backend, to_string(spec.loop.stop));
    // A generation is a query of its own (a batch of prompts to their last token): single_stream's closed loop.
    if (spec.generation.active() && spec.scenario.scenario != Scenario::single_stream &&
        !backend->capabilities().serves_endpoint)
        return fmt::format("a decoder model's cells run single_stream (one batch of prompts generated at a time); "
                           "scenario {} is for models the harness runs one inference at a time",
                           to_string(spec.scenario.scenario));
    if (auto reason = pipeline_problem(backend->capabilities(), spec.backend, spec)) return reason;
    return scenario_problem(backend->capabilities(), spec.backend, spec);
}

struct BackendRegistry::Impl {
    mutable std::mutex mutex;
    mutable std::vector<ModuleSlot> modules;  // first found wins, in search order

    ModuleSlot* find(std::string_view name) const {
        for (auto& slot : modules) {
            if (slot.name == name) return &slot;
        }
        return nullptr;
    }
};

BackendRegistry::BackendRegistry() : impl_(std::make_unique<Impl>()) {}
BackendRegistry::BackendRegistry(BackendRegistry&&) noexcept = default;
BackendRegistry& BackendRegistry::operator=(BackendRegistry&&) noexcept = default;
BackendRegistry::~BackendRegistry() = default;

std::vector<std::filesystem::path> BackendRegistry::default_search_dirs() {
    std::vector<std::filesystem::path> dirs;
    if (const char* env = std::getenv("INFERBENCH_BACKEND_PATH"); env && *env) {
        std::string_view rest = env;
        while (!rest.empty()) {
            const auto colon = rest.find(':');
            if (auto dir = rest.substr(0, colon); !dir.empty()) dirs.emplace_back(dir);
            if (colon == std::string_view::npos) break;
            rest.remove_prefix(colon + 1);
        }
    }
    const auto exe_dir = executable_dir();
    dirs.push_back(exe_dir / "backends");
    dirs.push_back(exe_dir.parent_path() / "lib" / "inferbench" / "backends");
    return dirs;
}

BackendRegistry BackendRegistry::discover(const std::vector<std::filesystem::path>& dirs) {
    BackendRegistry registry;
    for (const auto& dir : dirs) {
        std::error_code ec;
        std::vector<std::filesystem::path> files;
        for (const auto& item : std::filesystem::directory_iterator(dir, ec)) files.push_back(item.path());
        std::sort(files.begin(), files.end());
        for (const auto& file : files) {
            const std::string filename = file.filename().string();
            if (!filename.starts_with(kModulePrefix) || !filename.ends_with(kModuleSuffix)) continue;
            std::string name = filename.substr(kModulePrefix.size(),
                                               filename.size() - kModulePrefix.size() - kModuleSuffix.size());
            if (name == "null" || name == "openai" || registry.impl_->find(name)) continue;
            registry.impl_->modules.push_back(ModuleSlot{name, file, nullptr, nullptr, {}, false});
        }
    }
    return registry;
}

std::vector<std::string> BackendRegistry::names() const {
    std::vector<std::string> names = {"null", "openai"};
    for (const auto& slot : impl_->modules) names.push_back(slot.name);
    for (const auto& known : kKnownBackends) {
        if (std::find(names.begin(), names.end(), known.name) == names.end()) names.emplace_back(known.name);
    }
    return names;
}

std::vector<BackendEntry> BackendRegistry::entries() const {
    std::lock_guard lock(impl_->mutex);
    std::vector<BackendEntry> entries = {
        {"null", "does nothing: measures the harness's own overhead", "built-in", "", "", {}}};
    describe_devices(*make_null_backend(), entries.back());
    entries.push_back({"openai", "any server with the OpenAI HTTP API (vLLM, SGLang, llama.cpp's server, ...), streamed",
                       "built-in", "", "", {}});
    describe_devices(*make_openai_backend(), entries.back());
    // A backend's check may start its framework (a Python runner imports PyTorch, a second or more each):
    // all checked at once, the list takes as long as the slowest check, not the sum of them.
    std::vector<std::future<BackendEntry>> checks;
    for (auto& slot : impl_->modules)
        checks.push_back(std::async(std::launch::async, [&slot] { return module_entry(slot); }));
    for (auto& check : checks) entries.push_back(check.get());
    for (const auto& known : kKnownBackends) {
        if (impl_->find(known.name)) continue;
        entries.push_back({std::string(known.name), std::string(known.description), "not built",
                           fmt::format("not built; {}", known.how_to_get), "", {}});
    }
    return entries;
}

std::unique_ptr<Backend> BackendRegistry::create(std::string_view name) const {
    if (name == "null") return make_null_backend();
    if (name == "openai") return make_openai_backend();
    std::lock_guard lock(impl_->mutex);
    if (ModuleSlot* slot = impl_->find(name)) {
        open_module(*slot);
        if (!slot->module) throw EnvironmentError(slot->problem);
        return std::unique_ptr<Backend>(slot->module->create());
    }
    if (const KnownBackend* known = find_known(name))
        throw EnvironmentError(fmt::format("backend {} is not built; {}", name, known->how_to_get));
    throw UserError(fmt::format("unknown backend '{}'", name));
}

}  // namespace inferbench
