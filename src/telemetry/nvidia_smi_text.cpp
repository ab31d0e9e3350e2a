// nvidia-smi -q: one or many concatenated text dumps ("gpu_log"), each opened by the NVSMI LOG banner.
// Every GPU section is flattened into "section/subsection/key" -> value by its indentation, then read
// through the names that recent and older drivers print ("GPU Power Readings" / "Power Readings",
// "Clocks Event Reasons" / "Clocks Throttle Reasons").
#include <algorithm>
#include <array>
#include <map>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"
#include "telemetry/nvidia_smi.hpp"
#include "telemetry/nvidia_smi_detail.hpp"

namespace inferbench::telemetry::detail {
namespace {

struct Entry {
    std::string value;
    std::size_t line = 0;
};

struct GpuSection {
    std::size_t line = 0;
    std::map<std::string, Entry, std::less<>> entries;  // lowercase path -> value; the first occurrence
    bool closed = false;  // a blank line followed its last entry, as nvidia-smi ends each GPU section
};

struct Dump {
    std::size_t line = 0;
    std::optional<std::int64_t> unix_ms;
    std::vector<GpuSection> gpus;
};

// Instantaneous power is NVML's "current" reading; drivers before ~530 print "Power Draw" for it.
const std::array<Mapping, 14> kMappings = {{
    {&GpuSample::power_w,
     "W",
     {"gpu power readings/instantaneous power draw", "power readings/instantaneous power draw",
      "gpu power readings/power draw", "power readings/power draw"}},
    {&GpuSample::power_avg_w, "W", {"gpu power readings/average power draw", "power readings/average power draw"}},
    {&GpuSample::power_limit_w,
     "W",
     {"gpu power readings/current power limit", "power readings/current power limit",
      "power readings/enforced power limit", "gpu power readings/enforced power limit"}},
    {&GpuSample::temperature_c, "C", {"temperature/gpu current temp"}},
    {&GpuSample::memory_temperature_c, "C", {"temperature/memory current temp"}},
    {&GpuSample::sm_clock_mhz, "MHz", {"clocks/sm"}},
    {&GpuSample::memory_clock_mhz, "MHz", {"clocks/memory"}},
    {&GpuSample::graphics_clock_mhz, "MHz", {"clocks/graphics"}},
    {&GpuSample::gpu_util_pct, "%", {"utilization/gpu"}},
    {&GpuSample::memory_util_pct, "%", {"utilization/memory"}},
    {&GpuSample::fb_used_mib, "MiB", {"fb memory usage/used"}},
    {&GpuSample::fb_total_mib, "MiB", {"fb memory usage/total"}},
    // NVML's PCIe throughput unit, "KB/s", as the NVML sampler stores it.
    {&GpuSample::pcie_tx_kib_s, "KB/s", {"pci/tx throughput"}},
    {&GpuSample::pcie_rx_kib_s, "KB/s", {"pci/rx throughput"}},
}};

std::size_t indent_of(std::string_view line) {
    std::size_t indent = 0;
    for (const char c : line) {
        if (c == ' ')
            indent += 1;
        else if (c == '\t')
            indent += 4;
        else
            break;
    }
    return indent;
}

// Reads the dumps; "Driver Version" and "CUDA Version" go straight to the log.
std::vector<Dump> read_dumps(std::string_view text, NvidiaSmiLog& log) {
    std::vector<Dump> dumps;
    GpuSection* gpu = nullptr;
    std::vector<std::pair<std::size_t, std::string>> stack;  // (indent, lowercase name) of the enclosing lines
    const auto lines = split_lines(text);
    for (const auto& [number, line] : lines) {
        const std::string_view trimmed = trim(line);
        // A blank line ends a GPU section; an unterminated last line is a cut, whatever it holds.
        const bool terminated = number < lines.size() || text.ends_with('\n');
        if (trimmed.starts_with("=====") && trimmed.find("NVSMI LOG") != std::string_view::npos) {
            dumps.push_back({number, std::nullopt, {}});
            gpu = nullptr;
            continue;
        }
        if (trimmed.empty() && gpu && terminated) gpu->closed = true;
        if (trimmed.empty() || dumps.empty()) continue;
        const std::size_t indent = indent_of(line);
        const std::size_t colon = trimmed.find(" :");
        const bool has_value = colon != std::string_view::npos;
        const std::string_view key = has_value ? trim(trimmed.substr(0, colon)) : trimmed;
        const std::string_view value = has_value ? trim(trimmed.substr(colon + 2)) : std::string_view{};
        if (indent == 0) {
            gpu = nullptr;
            const std::string name = lowercase(key);
            if (!has_value && key.starts_with("GPU ")) {
                dumps.back().gpus.push_back({number, {}});
                gpu = &dumps.back().gpus.back();
                stack.clear();
            } else if (name == "timestamp") {
                dumps.back().unix_ms = parse_q_timestamp(value);
                if (!dumps.back().unix_ms)
                    log.warnings.push_back(
                        fmt::format("line {}: timestamp '{}' not understood; ignored", number, value));
            } else if (name == "driver version" && log.driver_version.empty()) {
                log.driver_version = value;
            } else if (name == "cuda version" && log.cuda_version.empty()) {
                log.cuda_version = value;
            }
            continue;
        }
        if (!gpu) continue;
        while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
        std::string path;
        for (const auto& [depth, name] : stack) path += name + '/';
        path += lowercase(key);
        if (has_value) gpu->entries.try_emplace(path, Entry{std::string(value), number});
        gpu->closed = false;
        stack.emplace_back(indent, lowercase(key));
    }
    return dumps;
}

const Entry* first_present(const GpuSection& gpu, const std::array<std::string_view, 4>& paths) {
    for (const auto path : paths) {
        if (path.empty()) break;
        if (const auto it = gpu.entries.find(path); it != gpu.entries.end()) return &it->second;
    }
    return nullptr;
}

std::optional<std::uint64_t> reasons_of(const GpuSection& gpu) {
    ReasonMask mask;
    for (const auto& [path, entry] : gpu.entries) {
        if (!path.starts_with("clocks event reasons/") && !path.starts_with("clocks throttle reasons/")) continue;
        const std::string_view label = std::string_view(path).substr(path.rfind('/') + 1);
        for (const auto& reason : reason_names())
            if (label == lowercase(reason.text_label)) mask.add(reason.bit, entry.value);
    }
    return mask.mask();
}

// Nullopt when the section holds no reading inferbench keeps.
std::optional<GpuSample> sample_of(const GpuSection& gpu, int index, NvidiaSmiLog& log) {
    GpuSample sample;
    sample.gpu_index = index;
    bool any = false;
    for (const auto& mapping : kMappings) {
        const Entry* entry = first_present(gpu, mapping.paths);
        if (!entry) continue;
        const bool read = apply_reading(sample, mapping, entry->value,
                                        fmt::format("line {}: '{}'", entry->line, entry->value), log.warnings);
        any = any || read;
    }
    if (const auto it = gpu.entries.find("performance state"); it != gpu.entries.end()) {
        const auto reading = parse_pstate(it->second.value);
        if (reading.malformed)
            log.warnings.push_back(fmt::format("line {}: performance state '{}' not understood; left out",
                                               it->second.line, it->second.value));
        if (reading.value) sample.pstate = static_cast<int>(*reading.value);
    }
    sample.clock_event_reasons = reasons_of(gpu);
    any = any || sample.pstate || sample.clock_event_reasons;
    if (!any) return std::nullopt;
    return sample;
}

// Whether a GPU section reaches its end. nvidia-smi ends each GPU section with a blank line, and its
// last entries are "Processes" (and, since about driver 550, "Capabilities"), after every reading kept
// here: a section with neither was cut inside, and its sample would be partial.
bool whole(const GpuSection& gpu) { return gpu.closed || gpu.entries.contains("processes"); }

}  // namespace

NvidiaSmiLog parse_q_text_log(std::string_view text, std::string_view file) {
    NvidiaSmiLog log;
    log.format = "q-text";
    const auto dumps = read_dumps(text, log);
    std::vector<std::optional<std::int64_t>> stamps;
    for (std::size_t d = 0; d < dumps.size(); ++d) {
        const Dump& dump = dumps[d];
        if (dump.gpus.empty()) {
            log.warnings.push_back(
                fmt::format("line {}: dump {} has no GPU section (cut short?); skipped", dump.line, d + 1));
            continue;
        }
        for (std::size_t g = 0; g < dump.gpus.size(); ++g) {
            const GpuSection& gpu = dump.gpus[g];
            if (!whole(gpu)) {
                log.warnings.push_back(fmt::format(
                    "line {}: GPU section cut short (no blank line after it, no 'Processes' line); skipped", gpu.line));
                continue;
            }
            const int index = static_cast<int>(g);
            auto sample = sample_of(gpu, index, log);
            if (!sample) {
                log.warnings.push_back(
                    fmt::format("line {}: GPU section without any reading inferbench keeps; skipped", gpu.line));
                continue;
            }
            if (const auto it = gpu.entries.find("product name"); it != gpu.entries.end())
                note_gpu_name(log, index, it->second.value);
            log.samples.push_back(*sample);
            stamps.push_back(dump.unix_ms);
        }
    }
    if (dumps.empty() || std::all_of(dumps.begin(), dumps.end(), [](const Dump& d) { return d.gpus.empty(); })) {
        throw UserError(
            fmt::format("{}: nvidia-smi -q output without any GPU section (cut short after the "
                        "header?); expected 'GPU 00000000:..' sections",
                        file));
    }
    assign_times(log, stamps, true);
    return log;
}

}  // namespace inferbench::telemetry::detail
