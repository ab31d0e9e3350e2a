// Nanoseconds, the harness's one unit of time, in the units shown, and back: the one place that scales them.
#pragma once

#include <type_traits>

namespace inferbench {

// Each divides rather than multiplies by the reciprocal, so 480000000 ns reads 0.48 s, not 0.48000000000000004.
template <typename Number>
requires std::is_arithmetic_v<Number>
constexpr double ns_to_us(Number ns) { return static_cast<double>(ns) / 1e3; }
template <typename Number>
requires std::is_arithmetic_v<Number>
constexpr double ns_to_ms(Number ns) { return static_cast<double>(ns) / 1e6; }
template <typename Number>
requires std::is_arithmetic_v<Number>
constexpr double ns_to_s(Number ns) { return static_cast<double>(ns) / 1e9; }
constexpr double ms_to_ns(double ms) { return ms * 1e6; }
constexpr double s_to_ns(double s) { return s * 1e9; }

}  // namespace inferbench
