// Units of the device figures, never ambiguous: FLOP/s for floating point and OPS for integers, GB/s as
// 10^9 bytes per second, byte sizes in binary units (KiB, MiB, GiB) or decimal (kB, MB, GB) as written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferbench::devices {

// 1.234e15 FLOP/s -> "1234 TFLOP/s"; 1.66e11 -> "166.1 GFLOP/s"; integer: "TOPS" / "GOPS".
std::string format_rate(double per_second, bool integer);
// 4.8e12 B/s -> "4.80 TB/s"; 4.48e11 -> "448.0 GB/s".
std::string format_bandwidth(double bytes_per_second);
// "206.2 FLOP/B" or "OP/B" for integers.
std::string format_intensity(double per_byte, bool integer);

// "1GiB", "64 MiB", "500MB", "4096B": bytes. A unit is required. Returns nullopt and sets *why on failure.
std::optional<std::int64_t> parse_byte_size(std::string_view text, std::string* why = nullptr);
// 1073741824 -> "1 GiB", 3145728 -> "3 MiB", 1000 -> "1000 B".
std::string format_byte_size(std::int64_t bytes);

}  // namespace inferbench::devices
