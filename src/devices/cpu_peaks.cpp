#include "devices/cpu_peaks.hpp"

#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "core/units.hpp"

namespace inferbench::devices {
namespace {

constexpr int kAmdZen4Family = 0x19;  // executes 512-bit FMAs as two 256-bit halves

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct VectorUnit {
    std::string isa;
    int bits = 64;
    int pipes = 1;
    std::string why;
};

VectorUnit vector_unit(const CpuInfo& cpu) {
    const auto has = [&](const char* flag) { return cpu.flags.contains(flag); };
    if (has("avx512f")) {
        if (cpu.vendor == "AuthenticAMD" && cpu.family == kAmdZen4Family)
            return {"AVX-512", 256, 2, "AMD Zen 4 runs 512-bit FMAs as two 256-bit halves: 2 x 256-bit FMA pipes"};
        return {"AVX-512", 512, 2, "2 x 512-bit FMA pipes per core assumed (some Xeon models have 1)"};
    }
    if (has("avx2") && has("fma")) return {"AVX2+FMA", 256, 2, "2 x 256-bit FMA pipes per core"};
    if (has("avx")) return {"AVX", 256, 1, "no FMA: one 256-bit multiply and one add per cycle"};
    if (has("sse2")) return {"SSE2", 128, 1, "no FMA: one 128-bit multiply and one add per cycle"};
    if (has("asimd")) return {"NEON", 128, 2, "2 x 128-bit FMA pipes per core assumed"};
    return {"scalar", 64, 1, "no vector unit known: one scalar FMA per cycle"};
}

}  // namespace

CpuInfo parse_cpuinfo(std::string_view text) {
    CpuInfo cpu;
    std::set<std::pair<std::string, std::string>> cores;
    std::string physical_id, implementer, part;
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key(trim(std::string_view(line).substr(0, colon)));
        const std::string value(trim(std::string_view(line).substr(colon + 1)));
        if (key == "processor")
            ++cpu.logical_cpus;
        else if (key == "vendor_id" && cpu.vendor.empty())
            cpu.vendor = value;
        else if (key == "model name" && cpu.model_name.empty())
            cpu.model_name = value;
        else if (key == "cpu family" && cpu.family == 0)
            cpu.family = static_cast<int>(parse_int(value).value_or(0));
        else if (key == "cpu MHz" && !cpu.mhz)
            cpu.mhz = parse_double(value);
        else if (key == "physical id")
            physical_id = value;
        else if (key == "core id")
            cores.emplace(physical_id, value);
        else if (key == "CPU implementer" && implementer.empty())
            implementer = value;
        else if (key == "CPU part" && part.empty())
            part = value;
        else if ((key == "flags" || key == "Features") && cpu.flags.empty()) {
            std::istringstream words(value);
            for (std::string word; words >> word;) cpu.flags.insert(word);
        }
    }
    if (cpu.model_name.empty() && !implementer.empty())
        cpu.model_name = fmt::format("ARMv8 (implementer {}, part {})", implementer, part);
    if (cpu.model_name.empty()) cpu.model_name = "unknown CPU";
    cpu.physical_cores = cores.empty() ? cpu.logical_cpus : static_cast<int>(cores.size());
    return cpu;
}

std::optional<CpuPeakEstimate> estimate_cpu_peaks(const CpuInfo& cpu, std::optional<double> max_freq_khz) {
    CpuPeakEstimate e;
    if (max_freq_khz && *max_freq_khz > 0) {
        e.clock_ghz = *max_freq_khz / 1e6;
        e.clock_source = "cpuinfo_max_freq";
    } else if (cpu.mhz && *cpu.mhz > 0) {
        e.clock_ghz = *cpu.mhz / 1e3;
        e.clock_source = "cpuinfo MHz (current clock)";
    } else {
        return std::nullopt;
    }
    e.cores = cpu.physical_cores > 0 ? cpu.physical_cores : 1;
    const VectorUnit unit = vector_unit(cpu);
    e.isa = unit.isa;
    e.vector_bits = unit.bits;
    e.fma_pipes = unit.pipes;
    const int fp32_lanes = unit.bits / 32;
    const double flop_per_cycle = fp32_lanes * 2.0 * unit.pipes;
    e.fp32_gflops = e.cores * flop_per_cycle * e.clock_ghz;
    e.fp64_gflops = e.fp32_gflops / 2;
    e.explanation = fmt::format(
        "estimated: {} cores x {} fp32 lanes x 2 FLOP per FMA x {} pipes x {:.3f} GHz ({}); {} ({}); fp64 half of fp32",
        e.cores, fp32_lanes, unit.pipes, e.clock_ghz, e.clock_source, e.isa, unit.why);
    return e;
}

std::string cpu_device_key(const std::string& model_name) { return "cpu:" + model_name; }

DeviceSpec cpu_device_spec(const CpuInfo& cpu, const std::optional<CpuPeakEstimate>& estimate) {
    DeviceSpec spec;
    spec.key = cpu_device_key(cpu.model_name);
    spec.name = cpu.model_name;
    spec.kind = "cpu";
    spec.estimated = true;
    spec.architecture.value =
        estimate ? fmt::format("{} ({})", cpu.vendor.empty() ? "CPU" : cpu.vendor, estimate->isa) : cpu.vendor;
    spec.cuda_cores.value = cpu.physical_cores;  // shown as cores
    if (estimate) spec.boost_clock_mhz.value = estimate->clock_ghz * 1e3;
    for (const Precision precision : kPrecisions) {
        Peak peak;
        peak.precision = precision;
        peak.cuda_cores = true;
        peak.source = "estimate";
        const bool estimable = estimate && (precision == Precision::fp32 || precision == Precision::fp64);
        if (estimable) {
            peak.dense = (precision == Precision::fp32 ? estimate->fp32_gflops : estimate->fp64_gflops) / 1e3;
            peak.derived = estimate->explanation;
        } else {
            peak.published = false;
            peak.note = estimate ? "no estimate for this precision on CPUs" : "no CPU clock known";
        }
        spec.peaks[precision] = peak;
    }
    return spec;
}

CpuInfo host_cpuinfo() { return parse_cpuinfo(read_text("/proc/cpuinfo")); }

std::optional<double> host_max_freq_khz() {
    const std::string text = read_text("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    const auto khz = parse_double(text);
    return khz && *khz > 0 ? khz : std::nullopt;
}

}  // namespace inferbench::devices
