// The CPU probe. The FMA kernels exist once per instruction set (compiled with target attributes, chosen
// at run time with __builtin_cpu_supports), so one binary measures each machine's widest vector unit.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <fmt/format.h>

#include "core/cpu_list.hpp"
#include "core/units.hpp"
#include "devices/probe.hpp"
#include "devices/probe_math.hpp"
#include "devices/quantities.hpp"

namespace inferbench::devices {
namespace {

namespace math = probe_math;

// Independent accumulators: FMA latency (4 cycles) x 2 pipes = 8 in flight, with margin.
constexpr int kChains = 12;

// Read through a volatile so the compiler cannot fold the chains; with a < 1 they converge (finite, normal).
volatile float g_multiplier = 0.9999f;
volatile float g_addend = 1e-4f;

struct FmaKernel {
    std::string isa;
    int fp32_lanes = 1;  // lanes per vector of floats (doubles: half)
    double (*fp32)(std::int64_t iterations, float a, float b) = nullptr;
    double (*fp64)(std::int64_t iterations, double a, double b) = nullptr;
};

#if defined(__x86_64__)
// Broadcasts and sums through memory: GCC 12's _mm512_set1_* and _mm512_reduce_* trip -Wuninitialized
// inside its own header.
template <typename T, std::size_t N>
struct Splat {
    alignas(64) T lanes[N];
    explicit Splat(T value) { std::fill(std::begin(lanes), std::end(lanes), value); }
};

__attribute__((target("avx512f"))) double fma_avx512_fp32(std::int64_t iterations, float a, float b) {
    __m512 acc[kChains];
    const __m512 va = _mm512_load_ps(Splat<float, 16>(a).lanes), vb = _mm512_load_ps(Splat<float, 16>(b).lanes);
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_load_ps(Splat<float, 16>(static_cast<float>(c) * 1e-3f).lanes);
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_ps(acc[c], va, vb);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = _mm512_add_ps(acc[0], acc[c]);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, acc[0]);
    double sum = 0;
    for (const float v : lanes) sum += static_cast<double>(v);
    return sum;
}

__attribute__((target("avx512f"))) double fma_avx512_fp64(std::int64_t iterations, double a, double b) {
    __m512d acc[kChains];
    const __m512d va = _mm512_load_pd(Splat<double, 8>(a).lanes), vb = _mm512_load_pd(Splat<double, 8>(b).lanes);
    for (int c = 0; c < kChains; ++c) acc[c] = _mm512_load_pd(Splat<double, 8>(c * 1e-3).lanes);
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = _mm512_fmadd_pd(acc[c], va, vb);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = _mm512_add_pd(acc[0], acc[c]);
    alignas(64) double lanes[8];
    _mm512_store_pd(lanes, acc[0]);
    double sum = 0;
    for (const double v : lanes) sum += v;
    return sum;
}

__attribute__((target("avx2,fma"))) double fma_avx2_fp32(std::int64_t iterations, float a, float b) {
    __m256 acc[kChains];
    const __m256 va = _mm256_set1_ps(a), vb = _mm256_set1_ps(b);
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c) * 1e-3f);
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], va, vb);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
    alignas(32) float lanes[8];
    _mm256_store_ps(lanes, acc[0]);
    double sum = 0;
    for (const float v : lanes) sum += static_cast<double>(v);
    return sum;
}

__attribute__((target("avx2,fma"))) double fma_avx2_fp64(std::int64_t iterations, double a, double b) {
    __m256d acc[kChains];
    const __m256d va = _mm256_set1_pd(a), vb = _mm256_set1_pd(b);
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_pd(c * 1e-3);
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_pd(acc[c], va, vb);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = _mm256_add_pd(acc[0], acc[c]);
    alignas(32) double lanes[4];
    _mm256_store_pd(lanes, acc[0]);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

// x86-64's baseline: a multiply and an add per step (no FMA), counted as the 2 operations they are.
double sse2_fp32(std::int64_t iterations, float a, float b) {
    __m128 acc[kChains];
    const __m128 va = _mm_set1_ps(a), vb = _mm_set1_ps(b);
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_ps(static_cast<float>(c) * 1e-3f);
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_ps(_mm_mul_ps(acc[c], va), vb);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = _mm_add_ps(acc[0], acc[c]);
    alignas(16) float lanes[4];
    _mm_store_ps(lanes, acc[0]);
    return static_cast<double>(lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}

double sse2_fp64(std::int64_t iterations, double a, double b) {
    __m128d acc[kChains];
    const __m128d va = _mm_set1_pd(a), vb = _mm_set1_pd(b);
    for (int c = 0; c < kChains; ++c) acc[c] = _mm_set1_pd(c * 1e-3);
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (int c = 0; c < kChains; ++c) acc[c] = _mm_add_pd(_mm_mul_pd(acc[c], va), vb);
    }
    for (int c = 1; c < kChains; ++c) acc[0] = _mm_add_pd(acc[0], acc[c]);
    alignas(16) double lanes[2];
    _mm_store_pd(lanes, acc[0]);
    return lanes[0] + lanes[1];
}
#endif

// Other architectures: plain C++ over 4-wide arrays, which the compiler vectorises as it can.
template <typename T>
double portable_fma(std::int64_t iterations, T a, T b) {
    T acc[kChains][4];
    for (int c = 0; c < kChains; ++c) std::fill(std::begin(acc[c]), std::end(acc[c]), static_cast<T>(c) * T(1e-3));
    for (std::int64_t i = 0; i < iterations; ++i) {
        for (auto& chain : acc) {
            for (T& v : chain) v = v * a + b;
        }
    }
    double sum = 0;
    for (const auto& chain : acc) {
        for (const T v : chain) sum += static_cast<double>(v);
    }
    return sum;
}

FmaKernel select_kernel() {
#if defined(__x86_64__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f")) return {"AVX-512", 16, fma_avx512_fp32, fma_avx512_fp64};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return {"AVX2+FMA", 8, fma_avx2_fp32, fma_avx2_fp64};
    return {"SSE2", 4, sse2_fp32, sse2_fp64};
#else
    return {"portable C++", 4, portable_fma<float>, portable_fma<double>};
#endif
}

int available_cpus() {
    if (const auto cpus = allowed_cpus(); !cpus.empty()) return static_cast<int>(cpus.size());
    return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// Runs work(thread) on `threads` threads started together; returns the wall time from the common start
// until the last one finished.
double run_parallel(int threads, const std::function<void(int)>& work) {
    std::atomic<int> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
            work(t);
        });
    }
    while (ready.load() < threads) std::this_thread::yield();
    const auto start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (auto& thread : pool) thread.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ProbeMeasurement fma_measurement(const FmaKernel& kernel, bool fp64, const CpuProbeOptions& options, int threads) {
    const auto one = [&](std::int64_t iterations) {
        return fp64 ? kernel.fp64(iterations, g_multiplier, g_addend) : kernel.fp32(iterations, g_multiplier, g_addend);
    };
    // Calibrate on one thread, so that one timed run lasts about target_seconds.
    constexpr std::int64_t kCalibration = 20'000;
    const auto t0 = std::chrono::steady_clock::now();
    volatile double keep = one(kCalibration);
    const double per_iteration =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kCalibration;
    const auto iterations = std::max<std::int64_t>(
        1000, static_cast<std::int64_t>(options.target_seconds / std::max(per_iteration, 1e-12)));
    std::vector<double> sums(static_cast<std::size_t>(threads));
    std::vector<double> times;
    for (int r = 0; r < std::max(1, options.repetitions); ++r)
        times.push_back(run_parallel(threads, [&](int t) { sums[static_cast<std::size_t>(t)] = one(iterations); }));
    keep = keep + sums.front();
    ProbeMeasurement m;
    m.name = fp64 ? "fma_fp64" : "fma_fp32";
    m.unit = "TFLOP/s";
    m.precision = fp64 ? "fp64" : "fp32";
    const int lanes = fp64 ? kernel.fp32_lanes / 2 : kernel.fp32_lanes;
    m.seconds = math::best_seconds(times.data(), times.size());
    m.work = math::fma_ops(static_cast<double>(threads) * lanes, static_cast<double>(iterations) * kChains);
    m.value = math::tera_rate(m.work, m.seconds);
    m.detail = fmt::format("{} threads x {} independent {}-lane {} chains x {} iterations", threads, kChains, lanes,
                           kernel.isa, iterations);
    return m;
}

std::vector<ProbeMeasurement> memory_measurements(const CpuProbeOptions& options, int threads) {
    const auto n = static_cast<std::size_t>(std::max<std::int64_t>(options.array_bytes / 8, threads));
    // Not value-initialised: each thread first touches its own part (pages land on its NUMA node).
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
    const auto chunk = [&](int t) {
        const std::size_t per = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
        const std::size_t begin = std::min(n, per * static_cast<std::size_t>(t));
        return std::pair{begin, std::min(n, begin + per)};
    };
    run_parallel(threads, [&](int t) {
        const auto [begin, end] = chunk(t);
        for (std::size_t i = begin; i < end; ++i) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.5;
        }
    });
    const auto measure = [&](const char* name, double bytes,
                             const std::function<void(std::size_t, std::size_t)>& kernel) {
        std::vector<double> times;
        for (int r = 0; r < std::max(1, options.repetitions); ++r)
            times.push_back(run_parallel(threads, [&](int t) {
                const auto [begin, end] = chunk(t);
                kernel(begin, end);
            }));
        ProbeMeasurement m;
        m.name = name;
        m.unit = "GB/s";
        m.work = bytes;
        m.seconds = math::best_seconds(times.data(), times.size());
        m.value = math::gigabytes_per_second(m.work, m.seconds);
        m.detail = fmt::format("{} threads over arrays of {} each; bytes read + written (write-allocate not counted)",
                               threads, format_byte_size(static_cast<std::int64_t>(n * sizeof(double))));
        return m;
    };
    const double array_bytes = static_cast<double>(n * sizeof(double));
    std::vector<ProbeMeasurement> results;
    results.push_back(measure("dram_copy", math::copy_bytes(array_bytes), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) c[i] = a[i];
    }));
    results.push_back(measure("dram_triad", math::triad_bytes(array_bytes), [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) a[i] = b[i] + 3.0 * c[i];
    }));
    return results;
}

}  // namespace

std::string cpu_probe_isa() { return select_kernel().isa; }

std::vector<ProbeMeasurement> probe_cpu(const CpuProbeOptions& options) {
    const int threads = options.threads > 0 ? options.threads : available_cpus();
    const FmaKernel kernel = select_kernel();
    std::vector<ProbeMeasurement> results;
    if (options.fma) {
        results.push_back(fma_measurement(kernel, false, options, threads));
        results.push_back(fma_measurement(kernel, true, options, threads));
    }
    if (options.memory) {
        for (auto& m : memory_measurements(options, threads)) results.push_back(std::move(m));
    }
    return results;
}

std::int64_t default_cpu_array_bytes() {
    // The last-level cache of the whole machine: each distinct instance of the highest cache level once.
    std::map<std::string, std::int64_t> instances;
    int top_level = 0;
    std::error_code ec;
    for (const auto& cpu : std::filesystem::directory_iterator("/sys/devices/system/cpu", ec)) {
        const std::string name = cpu.path().filename().string();
        if (!name.starts_with("cpu") || name.find_first_not_of("0123456789", 3) != std::string::npos) continue;
        for (int index = 0; index < 8; ++index) {
            const auto dir = cpu.path() / "cache" / fmt::format("index{}", index);
            std::string level, size, shared;
            std::ifstream(dir / "level") >> level;
            std::ifstream(dir / "size") >> size;
            std::ifstream(dir / "shared_cpu_list") >> shared;
            const auto lvl = parse_int(level);
            if (!lvl || size.empty()) continue;
            if (size.ends_with('K'))
                size.replace(size.size() - 1, 1, "KiB");
            else if (size.ends_with('M'))
                size.replace(size.size() - 1, 1, "MiB");
            const auto bytes = parse_byte_size(size);
            if (!bytes || *lvl < top_level) continue;
            if (*lvl > top_level) {
                instances.clear();
                top_level = static_cast<int>(*lvl);
            }
            instances[shared] = *bytes;
        }
    }
    std::int64_t total = 0;
    for (const auto& [_, bytes] : instances) total += bytes;
    return std::max<std::int64_t>(std::int64_t{256} << 20, 4 * total);
}

}  // namespace inferbench::devices
