// llama.cpp's process-wide state: its backend modules (the CPU one for this CPU, CUDA where its libraries
// are) loaded once from the folder libllama was loaded from, and its log, kept quiet but for the last error,
// which an error line quotes.
#pragma once

#include <string>

#include <ggml-backend.h>

#include "core/spec.hpp"

namespace inferbench::llamacpp {

// Loads the backend modules and initialises llama.cpp, once per process; returns the folder they came from.
const std::string& ensure_runtime();
// The errors llama.cpp logged since the last take, as one line; empty when none.
std::string take_last_error();
// The ggml device of `device` (cuda:N is the Nth GPU device), or nullptr where none was loaded.
ggml_backend_dev_t find_device(const Device& device);
// Number of GPU devices llama.cpp's modules found.
int gpu_device_count();

}  // namespace inferbench::llamacpp
