#include "backends/llamacpp/llamacpp_runtime.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>

#include <llama.h>

namespace inferbench::llamacpp {
namespace {

std::mutex& log_mutex() {
    static std::mutex m;
    return m;
}

std::string& last_error() {
    static std::string text;
    return text;
}

// llama.cpp logs a line in pieces (an error, then CONT pieces); its errors since the last take are kept, joined
// by "; " into one line (the specific cause first, the caller's summary after it).
void on_log(ggml_log_level level, const char* text, void* /*user*/) {
    static bool in_error = false;
    constexpr std::size_t kMaxErrorText = 600;
    if (text == nullptr) return;
    const std::lock_guard lock(log_mutex());
    const bool error_text = level == GGML_LOG_LEVEL_ERROR || (level == GGML_LOG_LEVEL_CONT && in_error);
    if (!error_text) {
        in_error = false;
        return;
    }
    std::string& kept = last_error();
    if (level == GGML_LOG_LEVEL_ERROR && !kept.empty()) kept += "; ";
    in_error = true;
    kept += text;
    while (!kept.empty() && (kept.back() == '\n' || kept.back() == ' ')) {
        kept.pop_back();
        in_error = false;
    }
    for (char& c : kept) c = c == '\n' ? ' ' : c;
    if (kept.size() > kMaxErrorText) kept.resize(kMaxErrorText);
}

std::string library_folder() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&llama_backend_init), &info) == 0 || info.dli_fname == nullptr) return ".";
    return std::filesystem::path(info.dli_fname).parent_path().string();
}

}  // namespace

const std::string& ensure_runtime() {
    static const std::string folder = [] {
        llama_log_set(on_log, nullptr);
        std::string dir = library_folder();
        ggml_backend_load_all_from_path(dir.c_str());
        llama_backend_init();
        return dir;
    }();
    return folder;
}

std::string take_last_error() {
    const std::lock_guard lock(log_mutex());
    std::string text = std::move(last_error());
    last_error().clear();
    return text;
}

ggml_backend_dev_t find_device(const Device& device) {
    ensure_runtime();
    int gpu = 0;
    for (std::size_t i = 0; i < ggml_backend_dev_count(); ++i) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        const auto type = ggml_backend_dev_type(dev);
        if (device.kind == DeviceKind::cpu && type == GGML_BACKEND_DEVICE_TYPE_CPU) return dev;
        if (device.kind == DeviceKind::cuda && type == GGML_BACKEND_DEVICE_TYPE_GPU && gpu++ == device.index) return dev;
    }
    return nullptr;
}

int gpu_device_count() {
    ensure_runtime();
    int count = 0;
    for (std::size_t i = 0; i < ggml_backend_dev_count(); ++i)
        if (ggml_backend_dev_type(ggml_backend_dev_get(i)) == GGML_BACKEND_DEVICE_TYPE_GPU) ++count;
    return count;
}

}  // namespace inferbench::llamacpp
