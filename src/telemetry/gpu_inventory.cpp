#include "telemetry/gpu_inventory.hpp"

#include <charconv>

#include <fmt/format.h>

#include "core/process/subprocess.hpp"
#include "core/units.hpp"
#include "telemetry/nvml.hpp"

namespace inferbench::telemetry {
namespace {

constexpr int kNvidiaSmiTimeoutMs = 20'000;

std::optional<std::uint32_t> parse_hex(std::string_view text) {
    if (text.starts_with("0x") || text.starts_with("0X")) text.remove_prefix(2);
    std::uint32_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

// One line of `--query-gpu=index,name,uuid,pci.bus_id,pci.device_id,memory.total,driver_version,
// clocks.default_applications.graphics --format=csv,noheader,nounits` (the last field may be missing or
// "[N/A]"). GPU names hold no commas.
std::optional<GpuIdentity> parse_inventory_line(std::string_view line) {
    std::vector<std::string> fields;
    for (const auto& field : split_list(line)) fields.emplace_back(trim(field));
    if (fields.size() != 7 && fields.size() != 8) return std::nullopt;
    const auto index = parse_int(fields[0]);
    if (!index) return std::nullopt;
    GpuIdentity gpu;
    gpu.index = static_cast<int>(*index);
    gpu.name = fields[1];
    gpu.uuid = fields[2];
    gpu.pci_bus_id = fields[3];
    gpu.pci_device_id = parse_hex(fields[4]);
    gpu.memory_total_mib = parse_double(fields[5]);
    gpu.driver_version = fields[6];
    if (fields.size() == 8) gpu.default_applications_clock_mhz = parse_double(fields[7]);
    return gpu;
}

}  // namespace

GpuInventory list_gpus() {
    GpuInventory inventory;
    std::string nvml_problem;
    try {
        const auto nvml = Nvml::open();
        for (int i = 0; i < nvml->device_count(); ++i) inventory.gpus.push_back(nvml->identity(i));
        inventory.source = "nvml";
        return inventory;
    } catch (const std::exception& e) {
        nvml_problem = e.what();
    }
    const auto program = find_program("nvidia-smi");
    if (!program) {
        inventory.unavailable = fmt::format("NVML: {}; nvidia-smi not found on PATH", nvml_problem);
        return inventory;
    }
    const CapturedRun run = run_captured({program->string(),
                                          "--query-gpu=index,name,uuid,pci.bus_id,pci.device_id,memory.total,driver_version,"
                                          "clocks.default_applications.graphics",
                                          "--format=csv,noheader,nounits"},
                                         std::nullopt, kNvidiaSmiTimeoutMs);
    if (!run.status.success()) {
        const std::string why = run.timed_out ? "timed out" : run.status.describe();
        inventory.unavailable = fmt::format("NVML: {}; nvidia-smi: {}{}", nvml_problem, why,
                                            trim(run.err).empty() ? "" : ": " + std::string(trim(run.err)));
        return inventory;
    }
    std::size_t pos = 0;
    while (pos < run.out.size()) {
        const std::size_t end = std::min(run.out.find('\n', pos), run.out.size());
        const std::string_view line = trim(std::string_view(run.out).substr(pos, end - pos));
        pos = end + 1;
        if (line.empty()) continue;
        if (auto gpu = parse_inventory_line(line)) inventory.gpus.push_back(std::move(*gpu));
    }
    inventory.source = "nvidia-smi";
    return inventory;
}

}  // namespace inferbench::telemetry
