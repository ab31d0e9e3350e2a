// CUDA-core FMA peaks, DRAM and L2 bandwidth.
#include <algorithm>
#include <cmath>
#include <vector>

#include "devices/probe_cuda/cuda_check.hpp"
#include "devices/probe_cuda/kernels.hpp"
#include "devices/probe_cuda/probes.hpp"
#include "devices/probe_math.hpp"

namespace inferbench::probe_cuda {
namespace {

namespace math = devices::probe_math;

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr int kDramInner = 10;  // kernel calls per timed DRAM run: ~5 ms at 4 TB/s with 1 GiB buffers

// Best of `repetitions` timed runs of `launch`, after one untimed warm-up run.
template <typename Launch>
double best_time(const ProbeContext& context, Launch&& launch) {
    EventTimer timer;
    timer.seconds(context.stream, launch);
    std::vector<double> times;
    for (int r = 0; r < context.repetitions; ++r) times.push_back(timer.seconds(context.stream, launch));
    return math::best_seconds(times.data(), times.size());
}

// Scales a calibration run's count so that one timed run lasts about target_seconds.
int scaled_count(int calibration_count, double calibration_seconds, double target_seconds, int max_count) {
    if (calibration_seconds <= 0) return max_count;
    const double scaled = calibration_count * target_seconds / calibration_seconds;
    return static_cast<int>(std::clamp(scaled, 1.0, static_cast<double>(max_count)));
}

std::size_t free_memory() {
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
}

}  // namespace

int ProbeContext::resident_blocks() const {
    const int per_sm = std::max(1, properties.maxThreadsPerMultiProcessor / kFmaThreads);
    return properties.multiProcessorCount * per_sm;
}

ProbeOutput probe_fma(const ProbeContext& context, const std::string& name) {
    struct Kind {
        const char* name;
        FmaKind kind;
        const char* precision;
        const char* unit;
    };
    static constexpr Kind kinds[] = {{"fma_fp64", FmaKind::fp64, "fp64", "TFLOP/s"},
                                     {"fma_fp32", FmaKind::fp32, "fp32", "TFLOP/s"},
                                     {"fma_fp16x2", FmaKind::fp16x2, "fp16", "TFLOP/s"},
                                     {"imad_int32", FmaKind::int32, "int32", "TOPS"}};
    const Kind* kind = std::find_if(std::begin(kinds), std::end(kinds), [&](const Kind& k) { return name == k.name; });
    ProbeOutput out = named_output(name, kind->unit, kind->precision);
    const int blocks = context.resident_blocks();
    DeviceBuffer sink(static_cast<std::size_t>(blocks) * kFmaThreads * sizeof(double));
    EventTimer timer;
    constexpr int kCalibration = 4096;
    const auto launch_with = [&](int iterations) {
        return [&, iterations] { launch_fma(kind->kind, blocks, iterations, sink.get(), context.stream); };
    };
    timer.seconds(context.stream, launch_with(kCalibration));
    const double calibration = timer.seconds(context.stream, launch_with(kCalibration));
    const int iterations = scaled_count(kCalibration, calibration, context.target_seconds, 1 << 30);
    out.seconds = best_time(context, launch_with(iterations));
    const double lanes = static_cast<double>(blocks) * kFmaThreads;
    out.work = lanes * static_cast<double>(iterations) * kFmaChains * ops_per_instruction(kind->kind);
    out.value = math::tera_rate(out.work, out.seconds);
    out.detail = std::to_string(blocks) + " blocks x " + std::to_string(kFmaThreads) + " threads, " +
                 std::to_string(kFmaChains) + " independent chains x " + std::to_string(iterations) + " iterations";
    return out;
}

ProbeOutput probe_dram(const ProbeContext& context, const std::string& name) {
    ProbeOutput out = named_output(name, "GB/s");
    const bool triad = name == "dram_triad";
    const int buffers = triad ? 3 : 2;
    std::size_t bytes = context.dram_bytes / kMiB * kMiB;
    const std::size_t fits = free_memory() / (static_cast<std::size_t>(buffers) + 1) / kMiB * kMiB;
    if (fits < 64 * kMiB) {
        out.skipped = "less than " + std::to_string(buffers * 64) + " MiB of GPU memory free";
        return out;
    }
    bytes = std::min(bytes, fits);
    std::vector<std::unique_ptr<DeviceBuffer>> arrays;
    for (int i = 0; i < buffers; ++i) {
        arrays.push_back(std::make_unique<DeviceBuffer>(bytes));
        launch_fill(FillKind::f32, arrays.back()->get(), bytes / sizeof(float), static_cast<unsigned>(i + 1),
                    context.stream);
    }
    check(cudaStreamSynchronize(context.stream), "fill");
    const int blocks = context.resident_blocks();
    const auto launch = [&] {
        for (int i = 0; i < kDramInner; ++i) {
            if (name == "dram_copy") {
                launch_copy(arrays[0]->get(), arrays[1]->get(), bytes, blocks, context.stream);
            } else if (triad) {
                launch_triad(arrays[0]->get(), arrays[1]->get(), arrays[2]->get(), bytes, blocks, context.stream);
            } else {
                check(cudaMemcpyAsync(arrays[1]->get(), arrays[0]->get(), bytes, cudaMemcpyDeviceToDevice,
                                      context.stream),
                      "cudaMemcpyAsync");
            }
        }
    };
    out.seconds = best_time(context, launch) / kDramInner;
    out.work = triad ? math::triad_bytes(static_cast<double>(bytes)) : math::copy_bytes(static_cast<double>(bytes));
    out.value = math::gigabytes_per_second(out.work, out.seconds);
    const std::string what = name == "dram_copy" ? "copy kernel"
                             : triad             ? "triad kernel a = b + 3c"
                                                 : "cudaMemcpyAsync device to device";
    out.detail = what + " over " + std::to_string(bytes / kMiB) + " MiB per array; bytes read + written";
    return out;
}

ProbeOutput probe_l2(const ProbeContext& context) {
    ProbeOutput out = named_output("l2_read", "GB/s");
    const auto l2 = static_cast<std::size_t>(context.properties.l2CacheSize);
    std::size_t bytes = context.l2_bytes ? context.l2_bytes : l2 * 2 / 5;
    bytes = bytes / (64 * 1024) * (64 * 1024);
    if (bytes == 0 || bytes > l2) {
        out.skipped = "the L2 buffer (" + std::to_string(bytes) + " bytes) must be above 64 KiB and fit in the " +
                      std::to_string(l2) + "-byte L2";
        return out;
    }
    DeviceBuffer buffer(bytes);
    launch_fill(FillKind::f32, buffer.get(), bytes / sizeof(float), 7, context.stream);
    const int blocks = context.resident_blocks();
    DeviceBuffer sums(static_cast<std::size_t>(blocks) * 256 * sizeof(float));
    EventTimer timer;
    constexpr int kCalibration = 16;
    const auto launch_with = [&](int passes) {
        return [&, passes] { launch_l2_read(buffer.get(), bytes, passes, sums.as<float>(), blocks, context.stream); };
    };
    timer.seconds(context.stream, launch_with(kCalibration));
    const double calibration = timer.seconds(context.stream, launch_with(kCalibration));
    const int passes = scaled_count(kCalibration, calibration, context.target_seconds, 1 << 20);
    out.seconds = best_time(context, launch_with(passes));
    out.work = static_cast<double>(bytes) * passes;
    out.value = math::gigabytes_per_second(out.work, out.seconds);
    out.detail = "reads of a " + std::to_string(bytes / 1024) + " KiB buffer (L2 " + std::to_string(l2 / kMiB) +
                 " MiB) x " + std::to_string(passes) + " passes, cached in L2 only";
    return out;
}

}  // namespace inferbench::probe_cuda
