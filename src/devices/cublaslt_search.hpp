// Where the CUDA probe finds cuBLASLt: $INFERBENCH_CUBLASLT_LIBRARY, then libcublasLt.so.13 / .so.12 in
// each $LD_LIBRARY_PATH folder, then in Python's site-packages (PyTorch's CUDA 13 wheels put it in
// nvidia/cu13/lib, CUDA 12 wheels in nvidia/cublas/lib), then the CUDA toolkit's folders. When none has
// it, the module asks the dynamic loader for the sonames.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace inferbench::devices {

struct CublasLtSearch {
    std::optional<std::string> env_library;  // $INFERBENCH_CUBLASLT_LIBRARY
    std::string ld_library_path;             // $LD_LIBRARY_PATH
    // Python's site-packages folders; asked only when the folders above have no cuBLASLt.
    std::function<std::vector<std::filesystem::path>()> site_dirs;
    std::vector<std::filesystem::path> system_dirs = {
        "/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib", "/usr/lib/x86_64-linux-gnu"};
};

struct CublasLtChoice {
    std::string library;  // a path, or "" for the dynamic loader's own search
    std::string how;      // "INFERBENCH_CUBLASLT_LIBRARY", "LD_LIBRARY_PATH", "Python site-packages", ...
};

// Throws UserError when INFERBENCH_CUBLASLT_LIBRARY names a file that does not exist.
CublasLtChoice find_cublaslt(const CublasLtSearch& search);

// This process's environment, with `python3 -c 'import site; ...'` for the site-packages folders.
CublasLtSearch host_cublaslt_search();

}  // namespace inferbench::devices
