// The first of several candidate libraries that dlopen opens: the one way the CUDA modules find a library of CUDA's
// that they open at run time (devices/probe_cuda: cuBLASLt; pipeline/gpu_cuda: nvJPEG). Header-only, on libc alone,
// so that those modules need nothing else of core.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace inferbench {

struct OpenedLibrary {
    void* handle = nullptr;  // dlopen's handle; null where no candidate opened
    std::string path;        // the candidate that opened
    std::string tried;       // where none opened: each candidate's dlerror, "; "-separated
};

// dlopen (RTLD_NOW | RTLD_LOCAL) of each of `candidates` (names or paths) in order, until one opens.
inline OpenedLibrary dlopen_first(const std::vector<std::string>& candidates) {
    OpenedLibrary opened;
    for (const auto& candidate : candidates) {
        opened.handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (opened.handle) {
            opened.path = candidate;
            opened.tried.clear();
            return opened;
        }
        const char* why = dlerror();
        opened.tried += (opened.tried.empty() ? "" : "; ") + std::string(why ? why : candidate);
    }
    return opened;
}

}  // namespace inferbench
