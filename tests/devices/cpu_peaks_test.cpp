// The CPU entry computed at run time, on fixed /proc/cpuinfo texts: peak = physical cores x fp32 lanes x
// 2 FLOP x FMA pipes x clock.
#include <gtest/gtest.h>

#include "devices/cpu_peaks.hpp"

namespace inferbench::devices {
namespace {

// n logical CPUs of one x86 package, `cores` physical (the rest are hyper-threads).
std::string x86_cpuinfo(const std::string& vendor, int family, const std::string& model, int logical, int cores,
                        const std::string& flags, double mhz) {
    std::string text;
    for (int i = 0; i < logical; ++i) {
        text += "processor\t: " + std::to_string(i) + "\nvendor_id\t: " + vendor +
                "\ncpu family\t: " + std::to_string(family) + "\nmodel name\t: " + model +
                "\ncpu MHz\t\t: " + std::to_string(mhz) +
                "\nphysical id\t: 0\ncore id\t\t: " + std::to_string(i % cores) + "\nflags\t\t: " + flags + "\n\n";
    }
    return text;
}

constexpr const char* kSkylakeFlags = "fpu vme sse sse2 ssse3 fma avx avx2 avx512f avx512dq avx512bw avx512vl";

TEST(CpuPeaks, ParsesX86Cpuinfo) {
    const auto cpu =
        parse_cpuinfo(x86_cpuinfo("GenuineIntel", 6, "Intel(R) Xeon(R) Gold 6248", 8, 4, kSkylakeFlags, 2500.0));
    EXPECT_EQ(cpu.vendor, "GenuineIntel");
    EXPECT_EQ(cpu.model_name, "Intel(R) Xeon(R) Gold 6248");
    EXPECT_EQ(cpu.family, 6);
    EXPECT_EQ(cpu.logical_cpus, 8);
    EXPECT_EQ(cpu.physical_cores, 4);
    ASSERT_TRUE(cpu.mhz);
    EXPECT_DOUBLE_EQ(*cpu.mhz, 2500.0);
    EXPECT_TRUE(cpu.flags.contains("avx512f"));
    EXPECT_TRUE(cpu.flags.contains("fma"));
}

TEST(CpuPeaks, Avx512IntelAtTheMaximumClock) {
    const auto cpu = parse_cpuinfo(x86_cpuinfo("GenuineIntel", 6, "Intel Xeon", 8, 4, kSkylakeFlags, 1200.0));
    const auto e = estimate_cpu_peaks(cpu, 3.4e6);  // cpuinfo_max_freq in kHz wins over the current clock
    ASSERT_TRUE(e);
    EXPECT_EQ(e->isa, "AVX-512");
    EXPECT_EQ(e->clock_source, "cpuinfo_max_freq");
    // 4 cores x 16 lanes x 2 FLOP x 2 pipes x 3.4 GHz
    EXPECT_DOUBLE_EQ(e->fp32_gflops, 4 * 16 * 2 * 2 * 3.4);
    EXPECT_DOUBLE_EQ(e->fp64_gflops, 4 * 8 * 2 * 2 * 3.4);
    EXPECT_NE(e->explanation.find("estimated: 4 cores x 16 fp32 lanes x 2 FLOP per FMA x 2 pipes x 3.400 GHz"),
              std::string::npos)
        << e->explanation;
}

TEST(CpuPeaks, Zen4RunsAvx512OnA256BitDatapath) {
    const auto cpu = parse_cpuinfo(x86_cpuinfo("AuthenticAMD", 25, "AMD EPYC 9654", 2, 2, kSkylakeFlags, 2596.136));
    const auto e = estimate_cpu_peaks(cpu, std::nullopt);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->clock_source, "cpuinfo MHz (current clock)");
    EXPECT_EQ(e->vector_bits, 256);
    EXPECT_NEAR(e->fp32_gflops, 2 * 8 * 2 * 2 * 2.596136, 1e-9);  // 166.15 GFLOP/s
}

TEST(CpuPeaks, Avx2WithFmaAndOlderVectorUnits) {
    const auto zen2 = estimate_cpu_peaks(
        parse_cpuinfo(x86_cpuinfo("AuthenticAMD", 23, "AMD EPYC 7742", 4, 4, "sse sse2 fma avx avx2", 3400)),
        std::nullopt);
    ASSERT_TRUE(zen2);
    EXPECT_EQ(zen2->isa, "AVX2+FMA");
    EXPECT_DOUBLE_EQ(zen2->fp32_gflops, 4 * 8 * 2 * 2 * 3.4);
    const auto sandy = estimate_cpu_peaks(
        parse_cpuinfo(x86_cpuinfo("GenuineIntel", 6, "old", 2, 2, "sse sse2 avx", 3000)), std::nullopt);
    EXPECT_EQ(sandy->isa, "AVX");
    EXPECT_DOUBLE_EQ(sandy->fp32_gflops, 2 * 8 * 2 * 1 * 3.0);
    const auto sse = estimate_cpu_peaks(parse_cpuinfo(x86_cpuinfo("GenuineIntel", 6, "older", 1, 1, "sse sse2", 2000)),
                                        std::nullopt);
    EXPECT_EQ(sse->isa, "SSE2");
    EXPECT_DOUBLE_EQ(sse->fp32_gflops, 1 * 4 * 2 * 1 * 2.0);
}

TEST(CpuPeaks, ArmCpuinfoWithoutModelNameOrCoreIds) {
    std::string text;
    for (int i = 0; i < 4; ++i) {
        text += "processor\t: " + std::to_string(i) +
                "\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp\n"
                "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\nCPU part\t: 0xd0c\n\n";
    }
    const auto cpu = parse_cpuinfo(text);
    EXPECT_EQ(cpu.model_name, "ARMv8 (implementer 0x41, part 0xd0c)");
    EXPECT_EQ(cpu.physical_cores, 4);
    EXPECT_FALSE(estimate_cpu_peaks(cpu, std::nullopt).has_value());  // no clock known at all
    const auto e = estimate_cpu_peaks(cpu, 2.6e6);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->isa, "NEON");
    EXPECT_DOUBLE_EQ(e->fp32_gflops, 4 * 4 * 2 * 2 * 2.6);
}

TEST(CpuPeaks, TheComputedEntryCarriesFp32AndFp64Only) {
    const auto cpu = parse_cpuinfo(x86_cpuinfo("GenuineIntel", 6, "Intel Xeon", 8, 4, kSkylakeFlags, 1200.0));
    const auto spec = cpu_device_spec(cpu, estimate_cpu_peaks(cpu, 3.4e6));
    EXPECT_EQ(spec.key, "cpu:Intel Xeon");
    EXPECT_EQ(spec.kind, "cpu");
    EXPECT_TRUE(spec.estimated);
    EXPECT_FALSE(spec.memory_bandwidth_gbs);
    EXPECT_DOUBLE_EQ(spec.peak(Precision::fp32)->dense, 4 * 16 * 2 * 2 * 3.4 / 1e3);  // TFLOP/s
    EXPECT_DOUBLE_EQ(spec.peak(Precision::fp64)->dense, 4 * 8 * 2 * 2 * 3.4 / 1e3);
    EXPECT_FALSE(spec.peak(Precision::fp16)->has_rate());
    EXPECT_FALSE(spec.peak(Precision::int8)->has_rate());
}

TEST(CpuPeaks, ThisHostHasAnEstimate) {
    const auto cpu = host_cpuinfo();
    EXPECT_GT(cpu.logical_cpus, 0);
    EXPECT_GT(cpu.physical_cores, 0);
    const auto e = estimate_cpu_peaks(cpu, host_max_freq_khz());
    ASSERT_TRUE(e);
    EXPECT_GT(e->fp32_gflops, 1.0);
}

}  // namespace
}  // namespace inferbench::devices
