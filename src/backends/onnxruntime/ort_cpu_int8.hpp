// How this host's CPU forms the int8 dot products of ONNX Runtime's CPU kernels (MLAS), which decides the
// int8 format a CPU cell's model gets. On x86-64 MLAS multiplies uint8 activations (int8 ones shifted to
// uint8) by int8 weights. With VNNI (VPDPBUSD: AVX-512 VNNI, AVX-VNNI) the products are summed in int32.
// Without it (AVX2, AVX-512 without VNNI, SSE4.1) VPMADDUBSW adds each pair of products into an int16 that
// saturates at 32767: 2 x 255 x 127 does not fit, so full-range weights lose accuracy there (ONNX Runtime's
// quantization documentation: use reduce_range, whose 7-bit weights fit). ARM's dot products do not saturate.
#pragma once

#include <string_view>

namespace inferbench {

enum class CpuInt8Dot {
    avx512_vnni,  // VPDPBUSD on AVX-512 (as MLAS selects it: AVX512F/BW/DQ/VL, VNNI, the OS saving ZMM state)
    avx_vnni,     // VPDPBUSD, VEX-encoded (with AVX2 and FMA)
    saturating,   // x86-64 without VNNI: int16 pair sums
    not_x86,
};

// The environment variable that makes host_cpu_int8_dot() answer `saturating` on any CPU (set to 1), so that
// the format chosen for x86 CPUs without VNNI can be exercised and checked on one that has it.
inline constexpr std::string_view kAssumeNoVnniVariable = "INFERBENCH_ASSUME_CPU_WITHOUT_VNNI";

// This host's CPU, from cpuid and XCR0 as MLAS reads them; kAssumeNoVnniVariable overrides.
CpuInt8Dot host_cpu_int8_dot();

}  // namespace inferbench
