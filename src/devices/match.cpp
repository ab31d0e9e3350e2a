#include "devices/match.hpp"

#include <cctype>
#include <cmath>
#include <regex>
#include <set>

#include <fmt/format.h>

namespace inferbench::devices {
namespace {

constexpr std::uint16_t kNvidiaVendorId = 0x10DE;

bool starts_with_word(const std::string& text, std::string_view prefix) {
    return text.size() > prefix.size() && text.starts_with(prefix);
}

std::string pci_text(std::optional<std::uint32_t> pci_device_id) {
    if (!pci_device_id) return "no PCI id";
    if (const auto id = nvidia_device_id(*pci_device_id)) return fmt::format("PCI device id 0x{:04X}", *id);
    return fmt::format("PCI id 0x{:08X}", *pci_device_id);
}

// Entries one of whose names equals `name` once both are reduced by `reduce`.
template <typename Reduce>
std::set<const DeviceSpec*> entries_named(const Catalog& catalog, Reduce reduce) {
    std::set<const DeviceSpec*> found;
    for (const auto& device : catalog.devices) {
        for (const auto& name : device.nvml_names) {
            if (reduce(device, normalize_gpu_name(name))) found.insert(&device);
        }
    }
    return found;
}

}  // namespace

std::string normalize_gpu_name(std::string_view name) {
    std::string out;
    bool space = false;
    for (const char c : name) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    for (bool stripped = true; stripped;) {
        stripped = false;
        for (const std::string_view prefix : {"nvidia ", "tesla ", "geforce "}) {
            if (starts_with_word(out, prefix)) {
                out.erase(0, prefix.size());
                stripped = true;
            }
        }
    }
    return out;
}

std::pair<std::string, std::optional<double>> split_memory_suffix(const std::string& normalized) {
    static const std::regex suffix(R"(^(.*?\S)[ -]*(\d+(?:\.\d+)?) ?gb(?: hbm\w*)?$)");
    std::smatch m;
    if (!std::regex_match(normalized, m, suffix)) return {normalized, std::nullopt};
    return {m[1].str(), std::stod(m[2].str())};
}

std::optional<std::uint16_t> nvidia_device_id(std::uint32_t pci_device_id) {
    if (pci_device_id <= 0xFFFF) return static_cast<std::uint16_t>(pci_device_id);
    if ((pci_device_id & 0xFFFF) != kNvidiaVendorId) return std::nullopt;
    return static_cast<std::uint16_t>(pci_device_id >> 16);
}

GpuMatch match_gpu(const Catalog& catalog, std::string_view name, std::optional<std::uint32_t> pci_device_id) {
    if (pci_device_id) {
        if (const auto id = nvidia_device_id(*pci_device_id)) {
            for (const auto& device : catalog.devices) {
                for (const auto known : device.pci_device_ids) {
                    if (known == *id) return {&device, pci_text(pci_device_id)};
                }
            }
        }
    }
    const std::string wanted = normalize_gpu_name(name);
    if (wanted.empty()) return {};
    const auto exact = entries_named(catalog, [&](const DeviceSpec&, const std::string& n) { return n == wanted; });
    if (exact.size() == 1) return {*exact.begin(), fmt::format("name '{}'", name)};
    const auto [base, size_gb] = split_memory_suffix(wanted);
    const auto loose = entries_named(catalog, [&](const DeviceSpec& device, const std::string& n) {
        if (split_memory_suffix(n).first != base) return false;
        return !size_gb || std::fabs(*size_gb - device.memory_size_gb.value) < 1.0;
    });
    if (loose.size() == 1) return {*loose.begin(), fmt::format("name '{}' (memory size written differently)", name)};
    return {};
}

std::string no_match_message(std::string_view name, std::optional<std::uint32_t> pci_device_id) {
    return fmt::format("no catalog entry for {} ({}); add one to data/devices.yaml", name, pci_text(pci_device_id));
}

}  // namespace inferbench::devices
