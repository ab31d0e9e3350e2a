#include "backends/onnxruntime/ort_cpu_int8.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace inferbench {
namespace {

#if defined(__x86_64__)
constexpr unsigned bit(unsigned n) { return 1U << n; }

std::uint64_t read_xcr0() {
    std::uint32_t low = 0;
    std::uint32_t high = 0;
    __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
    return (static_cast<std::uint64_t>(high) << 32) | low;
}

// The checks of MLAS's platform initialisation (onnxruntime/core/mlas/lib/platform.cpp) that select its
// VNNI kernels for u8 x s8 products.
CpuInt8Dot detect() {
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (__get_cpuid_max(0, nullptr) < 7 || !__get_cpuid(1, &a, &b, &c, &d)) return CpuInt8Dot::saturating;
    const bool fma = (c & bit(12)) != 0;
    const bool osxsave_and_avx = (c & (bit(27) | bit(28))) == (bit(27) | bit(28));
    if (!osxsave_and_avx) return CpuInt8Dot::saturating;
    const std::uint64_t xcr0 = read_xcr0();
    if ((xcr0 & 0x6) != 0x6) return CpuInt8Dot::saturating;  // the OS does not save YMM state
    __cpuid_count(7, 0, a, b, c, d);
    const unsigned leaf7_ebx = b;
    const unsigned leaf7_ecx = c;
    __cpuid_count(7, 1, a, b, c, d);
    const unsigned leaf7_1_eax = a;
    if (!fma || (leaf7_ebx & bit(5)) == 0) return CpuInt8Dot::saturating;  // no AVX2 kernels at all
    const bool avx512_core = (leaf7_ebx & bit(16)) != 0 && (xcr0 & 0xE0) == 0xE0 &&
                             (leaf7_ebx & (bit(17) | bit(30) | bit(31))) == (bit(17) | bit(30) | bit(31));
    if (avx512_core && (leaf7_ecx & bit(11)) != 0) return CpuInt8Dot::avx512_vnni;
    if ((leaf7_1_eax & bit(4)) != 0) return CpuInt8Dot::avx_vnni;
    return CpuInt8Dot::saturating;
}
#else
CpuInt8Dot detect() { return CpuInt8Dot::not_x86; }
#endif

bool assume_no_vnni() {
    const char* value = std::getenv(std::string(kAssumeNoVnniVariable).c_str());
    return value != nullptr && std::string_view(value) == "1";
}

}  // namespace

CpuInt8Dot host_cpu_int8_dot() {
    static const CpuInt8Dot detected = detect();
    return assume_no_vnni() ? CpuInt8Dot::saturating : detected;
}

}  // namespace inferbench
