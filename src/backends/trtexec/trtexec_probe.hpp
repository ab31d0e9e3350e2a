// What the trtexec backend asks the machine before it builds an engine: the GPU's name and the version
// of TensorRT that trtexec runs, both part of the engine's cache key (backends/tensorrt/tensorrt_engine_cache).
#pragma once

#include <filesystem>
#include <string>

namespace inferbench::trtexec {

// The name of CUDA device `index`: nvidia-smi, else /proc/driver/nvidia/gpus; "unknown-gpu" if neither.
std::string probe_gpu_name(int index);
// The TensorRT version trtexec prints in its banner ("&&&& RUNNING TensorRT.trtexec [TensorRT v100900]");
// "unknown" when it prints none.
std::string probe_tensorrt_version(const std::filesystem::path& trtexec);

}  // namespace inferbench::trtexec
