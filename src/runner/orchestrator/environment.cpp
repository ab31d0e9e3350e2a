#include "runner/orchestrator/environment.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "core/process/slurm_task.hpp"
#include "core/version.hpp"
#include "telemetry/gpu_inventory.hpp"
#include <sqlite3.h>

namespace inferbench::runner {
namespace {

// The value after "key:" on the first line of `path` that starts with `key`.
std::string field_of(const std::string& path, const std::string& key) {
    std::ifstream in(path);
    std::string line;
    while (std::getline(in, line)) {
        if (!line.starts_with(key)) continue;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const auto start = line.find_first_not_of(" \t", colon + 1);
        return start == std::string::npos ? "" : line.substr(start);
    }
    return "";
}

std::string first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::string os_name() {
    std::string name = field_of("/etc/os-release", "PRETTY_NAME");
    if (name.empty()) {
        std::ifstream in("/etc/os-release");
        std::string line;
        while (std::getline(in, line)) {
            if (line.starts_with("PRETTY_NAME=")) name = line.substr(12);
        }
    }
    if (name.size() >= 2 && name.front() == '"') name = name.substr(1, name.size() - 2);
    return name;
}

// The GPUs as NVML (else nvidia-smi) names them, or why none could be listed.
nlohmann::ordered_json gpu_list() {
    const auto inventory = telemetry::list_gpus();
    nlohmann::ordered_json gpus;
    gpus["source"] = inventory.source;
    if (!inventory.unavailable.empty()) gpus["unavailable"] = inventory.unavailable;
    gpus["devices"] = nlohmann::ordered_json::array();
    for (const auto& gpu : inventory.gpus) {
        nlohmann::ordered_json entry;
        entry["index"] = gpu.index;
        entry["name"] = gpu.name;
        entry["uuid"] = gpu.uuid;
        entry["pci_bus_id"] = gpu.pci_bus_id;
        if (gpu.pci_device_id) entry["pci_device_id"] = fmt::format("0x{:08X}", *gpu.pci_device_id);
        if (gpu.memory_total_mib) entry["memory_total_mib"] = *gpu.memory_total_mib;
        entry["driver_version"] = gpu.driver_version;
        if (gpu.default_applications_clock_mhz)
            entry["default_applications_clock_mhz"] = *gpu.default_applications_clock_mhz;
        gpus["devices"].push_back(entry);
    }
    return gpus;
}

}  // namespace

nlohmann::ordered_json capture_environment() {
    nlohmann::ordered_json env;
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    utsname uts{};
    uname(&uts);
    env["host"] = host;
    env["cpu_model"] = field_of("/proc/cpuinfo", "model name");
    env["cpu_cores"] = std::thread::hardware_concurrency();
    // What a decode step may read without DRAM (analysis/generation_bounds): the last-level cache the OS reports.
    if (const long llc = sysconf(_SC_LEVEL3_CACHE_SIZE) > 0 ? sysconf(_SC_LEVEL3_CACHE_SIZE) : sysconf(_SC_LEVEL2_CACHE_SIZE);
        llc > 0)
        env["cpu_last_level_cache_bytes"] = llc;
    env["memory_total_kib"] = field_of("/proc/meminfo", "MemTotal");
    env["kernel"] = fmt::format("{} {}", uts.sysname, uts.release);
    env["machine"] = uts.machine;
    env["os"] = os_name();
    env["compiler"] = std::string(kCompiler);
    env["build_type"] = std::string(kBuildType);
    env["git_commit"] = std::string(kGitCommit);
    env["inferbench_version"] = std::string(kVersion);
    nlohmann::ordered_json libraries;
    libraries["sqlite"] = sqlite3_libversion();
    libraries["fmt"] = fmt::format("{}.{}.{}", FMT_VERSION / 10000, FMT_VERSION / 100 % 100, FMT_VERSION % 100);
    env["libraries"] = libraries;
    if (auto driver = first_line("/proc/driver/nvidia/version"); !driver.empty()) env["nvidia_driver"] = driver;
    env["gpus"] = gpu_list();
    if (auto governor = first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); !governor.empty())
        env["cpu_governor"] = governor;
    if (const auto slurm = current_slurm_task()) env["slurm"] = to_json(*slurm);
    return env;
}

}  // namespace inferbench::runner
