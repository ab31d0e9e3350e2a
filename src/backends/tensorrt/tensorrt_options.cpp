#include "backends/tensorrt/tensorrt_options.hpp"

#include <fmt/format.h>

#include "backends/options.hpp"

namespace inferbench {

std::vector<BackendOption> tensorrt_option_list() {
    return {
        device_resident_option(),
        cuda_graph_option(),
        {"workspace_mb", "0", "builder workspace limit in MiB; 0: TensorRT's default (the device's memory)",
         OptionType::count},
        {"calibration_dir", "",
         "int8: folder of raw input batches (*.bin, sorted by name, one file per input per batch); empty: "
         "seeded random batches (a valid engine whose accuracy is meaningless)",
         OptionType::path},
        {"builder_optimization_level", fmt::format("{}", kDefaultBuilderOptimizationLevel),
         fmt::format("0..{}: higher builds slower and may find faster kernels", kMaxBuilderOptimizationLevel)},
        {"cache_dir", "", "where engines and the timing cache are kept; empty: <model cache dir>/tensorrt",
         OptionType::path},
    };
}

TensorRtOptions parse_tensorrt_options(const OptionMap& options) {
    const OptionReader read("tensorrt", options, tensorrt_option_list());
    TensorRtOptions parsed;
    parsed.device_resident = read.flag("device_resident");
    parsed.cuda_graph = read.flag("cuda_graph");
    parsed.workspace_mb = read.count("workspace_mb", kMaxWorkspaceMb);
    parsed.calibration_dir = read.text("calibration_dir");
    parsed.builder_optimization_level =
        static_cast<int>(read.count("builder_optimization_level", kMaxBuilderOptimizationLevel));
    parsed.cache_dir = read.text("cache_dir");
    return parsed;
}

}  // namespace inferbench
