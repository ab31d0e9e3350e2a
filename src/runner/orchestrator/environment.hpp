// The facts of the machine and build a run was measured on, stored with every run.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace inferbench::runner {

// host, cpu_model, cpu_cores, memory_total_kib, kernel, os, compiler, build_type, git_commit,
// inferbench_version, library versions, nvidia_driver (when present), gpus ({source, unavailable,
// devices: [{index, name, uuid, pci_bus_id, pci_device_id, memory_total_mib, driver_version,
// default_applications_clock_mhz}]}), slurm (core/process/slurm_task; inside a Slurm job). The orchestrator
// adds idle_baseline (core/idle_baseline) where it measured one.
nlohmann::ordered_json capture_environment();

}  // namespace inferbench::runner
