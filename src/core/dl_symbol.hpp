// A symbol of a library opened with dlopen, as a typed function pointer: the one way the CUDA tables
// (runner/worker/cuda_conditions: the driver; backends/onnxruntime/cuda_runtime: the runtime) fill themselves.
#pragma once

#include <dlfcn.h>

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace inferbench {

// Sets `fn` to `symbol` of `handle`; where it is missing, the first such symbol is named in `problem`
// ("libcuda.so.1 has no cuMemsetD8Async") and later ones leave it as it is.
template <typename Fn>
void resolve_symbol(void* handle, std::string_view library, const char* symbol, Fn& fn, std::string& problem) {
    fn = reinterpret_cast<Fn>(dlsym(handle, symbol));
    if (fn == nullptr && problem.empty()) problem = fmt::format("{} has no {}", library, symbol);
}

}  // namespace inferbench
