// The engine cache: a TensorRT engine is only valid for the model, precision, batch profile, GPU and
// TensorRT version it was built with, so those name its file, and a second load reuses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "core/spec.hpp"

namespace inferbench::trtexec {

struct EngineKey {
    std::string model_stem;  // for people reading the folder: "resnet50"
    std::uint64_t model_hash = 0;  // core/file_hash.hpp
    Precision precision = Precision::fp32;
    std::int64_t batch_size = 1;
    std::string gpu_name;
    std::string tensorrt_version;
    std::uint64_t extra_args_hash = 0;  // 0: no extra arguments
};

// "resnet50-0123456789abcdef-fp16-b8-nvidia-h200-trt10.9.0.engine" (plus "-a<hash>" with extra args).
std::string engine_file_name(const EngineKey& key);
// The timing cache is shared by every engine of one GPU and TensorRT version.
std::string timing_cache_file_name(const std::string& gpu_name, const std::string& tensorrt_version);

// Lower case, every run of other characters one '-': "NVIDIA H200" -> "nvidia-h200".
std::string file_name_slug(const std::string& text);

// The name of CUDA device `index`: nvidia-smi, else /proc/driver/nvidia/gpus; "unknown-gpu" if neither.
std::string probe_gpu_name(int index);
// The TensorRT version trtexec prints in its banner ("&&&& RUNNING TensorRT.trtexec [TensorRT v100900]");
// "unknown" when it prints none.
std::string probe_tensorrt_version(const std::filesystem::path& trtexec);

}  // namespace inferbench::trtexec
