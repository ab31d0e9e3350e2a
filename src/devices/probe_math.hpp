// The arithmetic that turns a probe's work and time into a rate, shared by the CUDA probe module and the
// CPU probe so that both count alike. Conventions: one FMA / multiply-accumulate = 2 operations; a GEMM
// of M x N x K = 2 M N K operations; bandwidth counts every byte read plus every byte written (STREAM's
// convention: write-allocate traffic is not counted); rates in 10^12 (TFLOP/s, TOPS) or 10^9 (GB/s).
#pragma once

#include <cstddef>

namespace inferbench::devices::probe_math {

inline constexpr double kOpsPerFma = 2.0;

// Operations of `fmas_per_lane` FMAs in each of `lanes` lanes (threads x vector width).
constexpr double fma_ops(double lanes, double fmas_per_lane) { return lanes * fmas_per_lane * kOpsPerFma; }

constexpr double gemm_ops(double m, double n, double k) { return kOpsPerFma * m * n * k; }

// Bytes moved by a copy of `array_bytes` (read once, written once) and by a triad a = b + s * c over arrays of
// `array_bytes` each (two read, one written).
constexpr double copy_bytes(double array_bytes) { return 2.0 * array_bytes; }
constexpr double triad_bytes(double array_bytes) { return 3.0 * array_bytes; }

// TFLOP/s or TOPS; 0 when no time was measured.
constexpr double tera_rate(double ops, double seconds) { return seconds > 0 ? ops / seconds / 1e12 : 0.0; }
// GB/s (10^9 bytes per second).
constexpr double gigabytes_per_second(double bytes, double seconds) {
    return seconds > 0 ? bytes / seconds / 1e9 : 0.0;
}

// The shortest of `count` timings (the probe reports the best repetition); 0 when there are none.
constexpr double best_seconds(const double* seconds, std::size_t count) {
    double best = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (seconds[i] > 0 && (best == 0 || seconds[i] < best)) best = seconds[i];
    }
    return best;
}

}  // namespace inferbench::devices::probe_math
