// The session settings TensorFlow takes as a serialized tensorflow.ConfigProto (TF_SetConfig), written
// by hand: five fields do not justify a protobuf dependency. SDK-free.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace inferbench {

struct SessionConfig {
    std::int64_t intra_op_threads = 0;  // 0: not set, TensorFlow's default
    std::int64_t inter_op_threads = 0;
    bool hide_gpus = false;          // device cpu: device_count {"GPU": 0}
    std::optional<int> visible_gpu;  // device cuda:N: gpu_options.visible_device_list "N" (it becomes GPU:0)
    bool allow_growth = false;       // gpu_options.allow_growth: for probes, which must not take the GPU's memory
};

// Fields: device_count = 1, intra_op_parallelism_threads = 2, inter_op_parallelism_threads = 5,
// gpu_options = 6 {allow_growth = 4, visible_device_list = 5}, allow_soft_placement = 7 (always on, so
// that a frozen graph's device pins to /device:GPU:0 still run on a CPU cell).
std::string encode_config_proto(const SessionConfig& config);

}  // namespace inferbench
