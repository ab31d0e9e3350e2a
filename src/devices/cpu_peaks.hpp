// The CPU's catalog entry, computed at run time: peak = cores x FMA lanes per cycle x 2 FLOP x clock.
// An estimate (said so wherever it is shown): it assumes every physical core runs its vector FMA pipes
// at the maximum clock, which AVX-heavy code on many CPUs does not.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "devices/catalog.hpp"

namespace inferbench::devices {

struct CpuInfo {
    std::string vendor;      // "GenuineIntel", "AuthenticAMD", "" (ARM)
    std::string model_name;  // "AMD EPYC 9654 96-Core Processor"; ARM: "ARMv8 (implementer 0x41, part 0xd0c)"
    int family = 0;          // x86 "cpu family"
    int logical_cpus = 0;
    int physical_cores = 0;       // distinct (physical id, core id); logical_cpus where the kernel does not say
    std::optional<double> mhz;    // "cpu MHz" of the first CPU (the current clock)
    std::set<std::string> flags;  // x86 "flags" or ARM "Features"
};

// Parses /proc/cpuinfo text (x86 or ARM).
CpuInfo parse_cpuinfo(std::string_view text);

struct CpuPeakEstimate {
    int cores = 0;
    double clock_ghz = 0;
    std::string clock_source;  // "cpuinfo_max_freq" or "cpuinfo MHz (current clock)"
    std::string isa;           // "AVX-512", "AVX2+FMA", "AVX", "SSE2", "NEON"
    int vector_bits = 0;       // datapath width the FMA pipes process per cycle
    int fma_pipes = 0;         // FMA (or multiply+add pair) issues per cycle
    double fp32_gflops = 0;    // GFLOP/s, dense
    double fp64_gflops = 0;
    std::string explanation;  // the formula with the numbers
};

// max_freq_khz: /sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq where readable. nullopt when no
// clock is known at all.
std::optional<CpuPeakEstimate> estimate_cpu_peaks(const CpuInfo& cpu, std::optional<double> max_freq_khz);

// "cpu:<model name>": the key CPU probes and roofs are stored under.
std::string cpu_device_key(const std::string& model_name);

// A catalog-shaped entry for the CPU: fp32 and fp64 peaks estimated, every other precision unpublished,
// no memory bandwidth (only a probe measures it).
DeviceSpec cpu_device_spec(const CpuInfo& cpu, const std::optional<CpuPeakEstimate>& estimate);

// This host's /proc/cpuinfo and cpuinfo_max_freq.
CpuInfo host_cpuinfo();
std::optional<double> host_max_freq_khz();

}  // namespace inferbench::devices
