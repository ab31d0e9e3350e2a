#include "backends/trtexec/trtexec_probe.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "backends/trtexec/trtexec_log.hpp"
#include "core/driver_gpus.hpp"
#include "core/process/subprocess.hpp"
#include "core/units.hpp"

namespace inferbench::trtexec {
namespace {

constexpr int kProbeTimeoutMs = 30'000;

std::string proc_gpu_name(int index) {
    const std::vector<DriverGpu> gpus = driver_gpus();
    if (index < 0 || static_cast<std::size_t>(index) >= gpus.size()) return {};
    return gpus[static_cast<std::size_t>(index)].model;
}

}  // namespace

std::string probe_gpu_name(int index) {
    const CapturedRun smi =
        run_captured({"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", std::to_string(index)},
                     std::nullopt, kProbeTimeoutMs);
    if (smi.status.success() && !smi.timed_out) {
        const std::string_view name = trim(std::string_view(smi.out).substr(0, smi.out.find('\n')));
        if (!name.empty()) return std::string(name);
    }
    const std::string from_proc = proc_gpu_name(index);
    return from_proc.empty() ? "unknown-gpu" : from_proc;
}

std::string probe_tensorrt_version(const std::filesystem::path& trtexec) {
    // --help exists in every trtexec and prints the banner with the version first; its exit code
    // differs between versions, so any is accepted.
    const CapturedRun help = run_captured({trtexec.string(), "--help"}, std::nullopt, kProbeTimeoutMs);
    const bool answered = help.status.exited && !help.timed_out;
    const std::string version = answered ? find_tensorrt_version(help.out + help.err) : std::string();
    return version.empty() ? "unknown" : version;
}

}  // namespace inferbench::trtexec
