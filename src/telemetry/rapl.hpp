// CPU package energy from RAPL through the powercap interface (/sys/class/powercap/intel-rapl:N, also
// used for AMD processors): each package's energy counter, its wraparound undone, summed over packages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "telemetry/procfs.hpp"

namespace inferbench::telemetry {

class RaplReader {
public:
    explicit RaplReader(const std::filesystem::path& powercap_root = "/sys/class/powercap");

    bool available() const { return !domains_.empty(); }
    // Why not: "no RAPL package domain under /sys/class/powercap", ".../energy_uj: Permission denied ...".
    const std::string& unavailable_reason() const { return why_not_; }
    // "package-0, package-1"
    std::string describe() const;
    // Joules used by every package since this reader was made; nothing when no counter could be read.
    std::optional<double> read_joules();

private:
    struct Domain {
        std::string name;
        procfs::CachedFile energy;
        std::uint64_t range_uj = 0;  // max_energy_range_uj: the counter wraps to 0 past it
        std::uint64_t last_uj = 0;
        double total_j = 0;
    };
    std::vector<Domain> domains_;
    std::string why_not_;
};

}  // namespace inferbench::telemetry
