// The options of the torch-aoti backend (plan: backend_options.torch-aoti): how the package is made (the
// Python whose PyTorch compiles it, one package per batch size or one dynamic one, the sequence length,
// more settings for the exporter) and how it runs (a CUDA graph around it, device-resident inputs, CPU
// threads). SDK-free, so that the tests read them on every machine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backends/backend.hpp"

namespace inferbench {

inline constexpr std::string_view kTorchAotiBackend = "torch-aoti";

struct AotiOptions {
    std::string python;                       // empty: python3 on PATH, then /usr/bin/python3
    bool dynamic_batch = false;               // one package for every batch size
    std::int64_t seq_len = 0;                 // 0: the exporter's default
    std::vector<std::string> export_options;  // KEY=VALUE
    bool cuda_graph = false;
    bool device_resident = false;
    std::int64_t threads = 0;  // 0: one per logical core
};

// The longest sequence seq_len takes.
inline constexpr std::int64_t kMaxAotiSeqLen = 65536;

std::vector<BackendOption> aoti_option_list();
AotiOptions parse_aoti_options(const OptionMap& options);  // throws UserError

// Why options that need a GPU cannot go with this cell's device, or nothing.
std::optional<std::string> aoti_device_problem(const AotiOptions& options, const BenchmarkSpec& spec);

}  // namespace inferbench
