// Synthetic rows for the report benches (report_scale, report_memory): realistic, non-repeating iterations and
// 10 Hz GPU and CPU samples, the same in both so their figures compare.
#pragma once

#include <cstdint>
#include <vector>

#include "core/samples.hpp"
#include "core/spec.hpp"

namespace inferbench::bench {

// Realistic, non-repeating values: about 1 ms per iteration with jitter, a little more for each larger
// batch (the `step`-th of the sweep), device times measured.
inline std::vector<IterationRecord> iterations_of(long count, int step, std::int64_t t0) {
    std::vector<IterationRecord> iterations;
    iterations.reserve(static_cast<std::size_t>(count));
    std::int64_t t = t0;
    for (long i = 0; i < count; ++i) {
        const std::int64_t e2e = 900'000 + 20'000 * step + (i * 7919) % 50'000;
        iterations.push_back({t, e2e, kNotMeasured, 20'000 + i % 997, e2e - 60'000 - i % 499, 15'000 + i % 499});
        t += e2e + 1'000;
    }
    return iterations;
}

inline std::vector<GpuSample> gpu_samples_of(std::int64_t from_ns, std::int64_t to_ns, double watts) {
    std::vector<GpuSample> samples;
    for (std::int64_t t = from_ns, i = 0; t < to_ns; t += 100'000'000, ++i) {
        GpuSample s;
        s.t_ns = t;
        s.power_w = watts + static_cast<double>(i % 37);
        s.energy_mj = 1e9 + static_cast<double>(i) * watts * 10;
        s.temperature_c = 55 + static_cast<double>(i % 20) * 0.5;
        s.sm_clock_mhz = i % 50 == 0 ? 1500 : 1980;
        s.memory_clock_mhz = 2619;
        s.gpu_util_pct = 97;
        s.memory_util_pct = 40;
        s.fb_used_mib = 8000;
        s.fb_total_mib = 143'771;
        s.clock_event_reasons = 0;
        samples.push_back(s);
    }
    return samples;
}

inline std::vector<CpuSample> cpu_samples_of(std::int64_t from_ns, std::int64_t to_ns) {
    std::vector<CpuSample> samples;
    for (std::int64_t t = from_ns, i = 0; t < to_ns; t += 100'000'000, ++i) {
        CpuSample s;
        s.t_ns = t;
        s.process_cpu_pct = 98.0 + static_cast<double>(i % 5);
        s.process_rss_mib = 900;
        s.host_cpu_pct = 55;
        s.host_memory_used_mib = 20'000;
        samples.push_back(s);
    }
    return samples;
}

}  // namespace inferbench::bench
