#include "backends/onnxruntime/ort_gpu_provider.hpp"

#include <dlfcn.h>

#include <array>
#include <cstring>
#include <mutex>
#include <set>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "backends/onnxruntime/cuda_runtime.hpp"

namespace inferbench {
namespace {

constexpr std::string_view kPipHint =
    "install it or add its folder to LD_LIBRARY_PATH (pip's nvidia-* packages hold CUDA 13 and cuDNN 9 libraries)";
constexpr std::array<RequiredLibrary, 4> kCudaLibraries = {{
    {"libcuda.so.1", "the NVIDIA driver", "a machine with an NVIDIA GPU and its driver is needed"},
    {cuda::kRuntimeLibrary, "the CUDA 13 runtime", kPipHint},
    {"libcublasLt.so.13", "cuBLASLt of CUDA 13", kPipHint},
    {"libcudnn.so.9", "cuDNN 9", kPipHint},
}};
constexpr std::array<RequiredLibrary, 5> kTensorRtLibraries = {{
    kCudaLibraries[0], kCudaLibraries[1], kCudaLibraries[2], kCudaLibraries[3],
    {"libnvinfer.so.10", "TensorRT 10", "install TensorRT 10 or add its lib folder to LD_LIBRARY_PATH"},
}};

// What ONNX Runtime answers when a provider is not compiled into the runtime.
constexpr std::string_view kNotInThisBuild = "not enabled in this build";

std::string how_to_get(GpuProvider provider) {
    if (provider == GpuProvider::cuda)
        return "run scripts/fetch-onnxruntime.sh --with-cuda (it fetches the CUDA provider libraries), or point the "
               "onnxruntime option runtime at a GPU build of ONNX Runtime (e.g. pip onnxruntime-gpu's capi/ folder)";
    return "point the onnxruntime option runtime at an ONNX Runtime built with TensorRT (e.g. pip onnxruntime-gpu's "
           "capi/ folder)";
}

struct Attachment {
    std::optional<std::string> problem;
    bool built_in = false;
    Ort::ConstEpDevice ep_device{nullptr};  // the plugin's device, owned by the runtime's environment
    Ort::MemoryInfo own_memory{nullptr};    // a built-in provider's device memory
    const OrtMemoryInfo* memory = nullptr;
};

// Whether the runtime has the provider compiled in: nothing when it has not, else the answer of
// appending it with default options (empty: it works).
std::optional<std::string> built_in_answer(GpuProvider provider) {
    try {
        Ort::SessionOptions options;
        if (provider == GpuProvider::cuda) {
            Ort::CUDAProviderOptions cuda;
            options.AppendExecutionProvider_CUDA_V2(*cuda);
        } else {
            Ort::TensorRTProviderOptions tensorrt;
            options.AppendExecutionProvider_TensorRT_V2(*tensorrt);
        }
        return std::string();
    } catch (const Ort::Exception& e) {
        if (std::string_view(e.what()).find(kNotInThisBuild) != std::string_view::npos) return std::nullopt;
        return std::string(e.what());
    }
}

// The plugin's device for GPU `device`: the one whose provider options say device_id N, else the Nth.
std::optional<Ort::ConstEpDevice> plugin_device(const OrtRuntime& runtime, GpuProvider provider, int device,
                                                std::size_t& found) {
    std::vector<Ort::ConstEpDevice> devices;
    for (const auto& ep_device : runtime.env().GetEpDevices())
        if (provider_name(provider) == ep_device.EpName()) devices.push_back(ep_device);
    found = devices.size();
    const std::string id = std::to_string(device);
    for (const auto& ep_device : devices) {
        const char* value = ep_device.EpOptions().GetValue("device_id");
        if (value != nullptr && id == value) return ep_device;
    }
    if (static_cast<std::size_t>(device) < devices.size()) return devices[static_cast<std::size_t>(device)];
    return std::nullopt;
}

std::optional<std::string> attach_plugin(const OrtRuntime& runtime, GpuProvider provider, int device,
                                         Attachment& attachment) {
    const auto library = runtime.folder() / provider_library(provider);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(library, ec))
        return fmt::format("ONNX Runtime {} has no {} built in and no {} next to it; {}", runtime.description(),
                           provider_name(provider), provider_library(provider), how_to_get(provider));
    const auto shared = runtime.folder() / "libonnxruntime_providers_shared.so";
    // The provider library resolves Provider_GetHost from it: it must be global before registering.
    if (dlopen(shared.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr)
        return fmt::format("cannot load {}: {}", shared.string(), dlerror());
    // Not opened here to look at its entry points first: the provider library's initialisers ask for the
    // host interface that ONNX Runtime sets up while registering it, and crash without it (seen on the H200).
    // ONNX Runtime's own error names a library that is not a plugin.
    static std::set<std::pair<const OrtRuntime*, GpuProvider>> registered;
    try {
        if (registered.insert({&runtime, provider}).second)
            runtime.env().RegisterExecutionProviderLibrary(std::string(provider_name(provider)).c_str(), library.string());
        std::size_t found = 0;
        const auto ep_device = plugin_device(runtime, provider, device, found);
        if (!ep_device)
            return fmt::format("{} ({}) offers {} GPU(s); GPU {} is not one of them", provider_name(provider),
                               library.string(), found, device);
        attachment.ep_device = *ep_device;
        attachment.memory = ep_device->GetMemoryInfo(OrtDeviceMemoryType_DEFAULT);
    } catch (const Ort::Exception& e) {
        return fmt::format("ONNX Runtime {} cannot register {}: {}; {}", runtime.description(), library.string(),
                           e.what(), how_to_get(provider));
    }
    if (attachment.memory == nullptr)
        return fmt::format("{} names no device memory for GPU {}", provider_name(provider), device);
    return std::nullopt;
}

std::optional<std::string> visible_gpu_problem(int device) {
    std::string problem;
    const cuda::RuntimeTable* table = cuda::runtime(problem);
    if (table == nullptr) return problem;
    int count = 0;
    if (const int status = table->get_device_count(&count); status != 0)
        return fmt::format("no usable GPU: cudaGetDeviceCount says {}", table->get_error_string(status));
    if (device >= count) return fmt::format("{} GPU(s) visible, so there is no GPU {}", count, device);
    return std::nullopt;
}

Attachment attach(const OrtRuntime& runtime, GpuProvider provider, int device) {
    runtime.use();  // an Attachment holds C++ API objects, released through the runtime's API even when empty
    Attachment attachment;
    attachment.problem = missing_library_problem(required_libraries(provider), open_library);
    if (!attachment.problem) attachment.problem = visible_gpu_problem(device);
    if (attachment.problem) return attachment;
    if (const auto answer = built_in_answer(provider)) {
        attachment.built_in = true;
        if (!answer->empty()) {
            attachment.problem = fmt::format("ONNX Runtime {} cannot start {}: {}", runtime.description(),
                                             provider_name(provider), *answer);
            return attachment;
        }
        attachment.own_memory = Ort::MemoryInfo("Cuda", OrtDeviceAllocator, device, OrtMemTypeDefault);
        attachment.memory = attachment.own_memory;
        return attachment;
    }
    attachment.problem = attach_plugin(runtime, provider, device, attachment);
    return attachment;
}

Attachment& attachment_for(const OrtRuntime& runtime, GpuProvider provider, int device) {
    static std::mutex mutex;
    static std::map<std::tuple<const OrtRuntime*, GpuProvider, int>, Attachment> attachments;  // for the process
    const std::lock_guard lock(mutex);
    const auto key = std::make_tuple(&runtime, provider, device);
    auto it = attachments.find(key);
    if (it == attachments.end()) it = attachments.emplace(key, attach(runtime, provider, device)).first;
    return it->second;
}

}  // namespace

std::string_view provider_name(GpuProvider provider) {
    return provider == GpuProvider::cuda ? "CUDAExecutionProvider" : "TensorrtExecutionProvider";
}

std::string_view provider_library(GpuProvider provider) {
    return provider == GpuProvider::cuda ? "libonnxruntime_providers_cuda.so" : "libonnxruntime_providers_tensorrt.so";
}

std::span<const RequiredLibrary> required_libraries(GpuProvider provider) {
    if (provider == GpuProvider::cuda) return kCudaLibraries;
    return kTensorRtLibraries;
}

std::optional<std::string> open_library(std::string_view soname) {
    if (dlopen(std::string(soname).c_str(), RTLD_NOW | RTLD_GLOBAL) != nullptr) return std::nullopt;
    const char* message = dlerror();
    return std::string(message != nullptr ? message : "unknown error");
}

std::optional<std::string> missing_library_problem(std::span<const RequiredLibrary> libraries,
                                                   const LibraryOpener& open) {
    for (const auto& library : libraries) {
        if (auto message = open(library.soname))
            return fmt::format("{} ({}) cannot be loaded: {}; {}", library.soname, library.what, *message, library.fix);
    }
    return std::nullopt;
}

std::optional<std::string> GpuProviderSetup::problem(const OrtRuntime& runtime, GpuProvider provider, int device) {
    return attachment_for(runtime, provider, device).problem;
}

const OrtMemoryInfo* GpuProviderSetup::append(Ort::SessionOptions& session_options, const OrtRuntime& runtime,
                                              GpuProvider provider, int device, const ProviderOptions& options) {
    Attachment& attachment = attachment_for(runtime, provider, device);
    if (attachment.problem) throw std::logic_error("GpuProviderSetup::append() for a provider that cannot run");
    std::unordered_map<std::string, std::string> map(options.begin(), options.end());
    // The plugin's device is the GPU; a built-in provider is told it.
    if (attachment.built_in) map["device_id"] = std::to_string(device);
    if (!attachment.built_in) {
        session_options.AppendExecutionProvider_V2(runtime.env(), {attachment.ep_device}, map);
    } else if (provider == GpuProvider::cuda) {
        Ort::CUDAProviderOptions cuda;
        cuda.Update(map);
        session_options.AppendExecutionProvider_CUDA_V2(*cuda);
    } else {
        Ort::TensorRTProviderOptions tensorrt;
        tensorrt.Update(map);
        session_options.AppendExecutionProvider_TensorRT_V2(*tensorrt);
    }
    return attachment.memory;
}

}  // namespace inferbench
