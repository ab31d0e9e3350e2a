// The probes of this host's devices, as `inferbench probe` runs them: which probes on which devices,
// each device identified (the catalog entry it matches, or the CPU's computed entry), and what each
// probe measured. The CLI parses the options into these and prints and stores the result.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "devices/catalog.hpp"
#include "devices/probe.hpp"

namespace inferbench::devices {

struct ProbeTargets {
    bool cpu = false;
    bool all_gpus = false;  // every GPU there is, if any (no error when there is none)
    std::set<int> gpus;     // asked for by index: an error when they cannot be probed
};

struct ProbeSettings {
    std::vector<std::string> probes = {"all"};  // probe names; "all" selects every one
    std::int64_t memory_bytes = 0;              // each copy/triad array; 0: each side's default
    std::int64_t l2_bytes = 0;                  // the GPU L2 probe's buffer; 0: the module's default
    int gemm_size = 8192;
    int repetitions = 0;  // 0: each side's default
};

// Whether `probes` (names, or "all") select the probe `name`.
bool selects(const std::vector<std::string>& probes, std::string_view name);

struct DeviceProbes {
    std::string key, name, uuid, identified;  // identified: how the entry was found, or why none was
    const DeviceSpec* spec = nullptr;         // the catalog entry it matched
    std::optional<DeviceSpec> computed;       // the CPU's entry
    std::vector<ProbeMeasurement> results;    // the selected probes only
};

DeviceProbes probe_host_cpu(const ProbeSettings& settings);

// The selected GPU probes on the targets' GPUs, each matched against `catalog` (by name and PCI id).
// Without the CUDA probe module, or without a GPU, `notes` says why no GPU was probed, unless GPUs were
// asked for by index: then it throws EnvironmentError; an index this machine lacks throws UserError.
std::vector<DeviceProbes> probe_gpus(const ProbeTargets& targets, const ProbeSettings& settings, const Catalog& catalog,
                                     std::vector<std::string>& notes);

}  // namespace inferbench::devices
