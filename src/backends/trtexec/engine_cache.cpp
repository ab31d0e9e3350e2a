#include "backends/trtexec/engine_cache.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "backends/trtexec/trtexec_log.hpp"
#include "core/subprocess.hpp"
#include "core/units.hpp"

namespace inferbench::trtexec {
namespace {

constexpr int kProbeTimeoutMs = 30'000;

std::string proc_gpu_name(int index) {
    std::error_code ec;
    std::vector<std::filesystem::path> gpus;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec))
        gpus.push_back(entry.path());
    std::sort(gpus.begin(), gpus.end());  // by PCI address, the order CUDA enumerates by default
    if (index < 0 || static_cast<std::size_t>(index) >= gpus.size()) return {};
    std::ifstream info(gpus[static_cast<std::size_t>(index)] / "information");
    std::string line;
    while (std::getline(info, line)) {
        if (line.starts_with("Model:")) return std::string(trim(std::string_view(line).substr(6)));
    }
    return {};
}

}  // namespace

std::string file_name_slug(const std::string& text) {
    std::string slug;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (std::isalnum(u) || c == '.' || c == '_') slug += static_cast<char>(std::tolower(u));
        else if (!slug.empty() && slug.back() != '-') slug += '-';
    }
    while (slug.ends_with('-')) slug.pop_back();
    return slug.empty() ? "unnamed" : slug;
}

std::string engine_file_name(const EngineKey& key) {
    std::string name = fmt::format("{}-{:016x}-{}-b{}-{}-trt{}", file_name_slug(key.model_stem), key.model_hash,
                                   to_string(key.precision), key.batch_size, file_name_slug(key.gpu_name),
                                   file_name_slug(key.tensorrt_version));
    if (key.extra_args_hash != 0) name += fmt::format("-a{:08x}", key.extra_args_hash & 0xffffffffu);
    return name + ".engine";
}

std::string timing_cache_file_name(const std::string& gpu_name, const std::string& tensorrt_version) {
    return fmt::format("timing-{}-trt{}.cache", file_name_slug(gpu_name), file_name_slug(tensorrt_version));
}

std::string probe_gpu_name(int index) {
    const CapturedRun smi = run_captured(
        {"nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", std::to_string(index)}, std::nullopt,
        kProbeTimeoutMs);
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
