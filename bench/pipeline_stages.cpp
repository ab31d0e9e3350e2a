// A pipeline's CPU stages on this machine: JPEG/PNG decode, resize by each model family's rule (ResNet-50's
// shorter side 256 + centre crop 224, YOLO's letterbox 640, SSD's plain 300) and normalise to float32 NCHW, each
// alone and all three together as a pipeline cell runs them (pipeline/preprocess_batch), on 1 and 2 worker
// threads. Images are the synthetic ones a cell writes (photo-like content, real encoder), at 640x480 and
// 1920x1080. Per row: images per second over the whole run, the wall time per image on one thread (threads /
// images per second) and the process's CPU time per image. The load average is printed: on a shared host the
// wall figures are lower bounds of what the CPU does alone.
//
//   build/release/bench/pipeline_stages [SECONDS_PER_ROW=1] [IMAGES=16]
#include <array>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/resize.hpp"
#include "pipeline/thread_pool.hpp"

namespace inferbench::pipeline {
namespace {

struct Source {
    const char* label;
    ImageSize size;
    ImageFormat format;
};

struct Model {
    const char* label;
    PipelineSteps steps;
};

PipelineSteps steps_of(ResizeRule rule, ImageSize input, std::int64_t shorter, std::array<float, 3> mean,
                       std::array<float, 3> std) {
    PipelineSteps steps;
    steps.resize = rule;
    steps.input_size = input;
    steps.resize_shorter = shorter;
    steps.mean = mean;
    steps.std = std;
    return steps;
}

std::vector<Model> models() {
    const std::array<float, 3> imagenet_mean{123.675F, 116.28F, 103.53F}, imagenet_std{58.395F, 57.12F, 57.375F};
    return {
        {"resnet50 crop 224", steps_of(ResizeRule::shorter_side_crop, {224, 224}, 256, imagenet_mean, imagenet_std)},
        {"yolo letterbox 640", steps_of(ResizeRule::letterbox, {640, 640}, 0, {0, 0, 0}, {255, 255, 255})},
        {"ssd plain 300",
         steps_of(ResizeRule::plain, {300, 300}, 0, {127.5F, 127.5F, 127.5F}, {127.5F, 127.5F, 127.5F})}};
}

std::int64_t process_cpu_ns() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

struct Figure {
    double images_per_second = 0;
    double cpu_ms_per_image = 0;  // the process's CPU time (every thread's) per image
};

// Runs `round` (which handles `count` images) until `seconds` have passed, after one round of warm-up.
Figure measure(std::size_t count, double seconds, const std::function<void()>& round) {
    round();  // warm-up: buffers sized, caches filled
    const std::int64_t start = monotonic_ns();
    const std::int64_t start_cpu = process_cpu_ns();
    std::int64_t done = 0;
    std::int64_t now = start;
    while (now - start < static_cast<std::int64_t>(seconds * 1e9)) {
        round();
        done += static_cast<std::int64_t>(count);
        now = monotonic_ns();
    }
    const auto images = static_cast<double>(done);
    return {images / (static_cast<double>(now - start) * 1e-9),
            static_cast<double>(process_cpu_ns() - start_cpu) * 1e-6 / images};
}

Figure measure_on(ThreadPool& pool, std::size_t count, double seconds,
                  const std::function<void(std::size_t, std::size_t)>& task) {
    return measure(count, seconds, [&] { pool.parallel_for(count, task); });
}

void row(const char* source, const std::string& stage, std::size_t threads, const Figure& figure) {
    std::printf("| %-18s | %-38s | %7zu | %10.1f | %8.3f | %12.3f |\n", source, stage.c_str(), threads,
                figure.images_per_second, static_cast<double>(threads) * 1000.0 / figure.images_per_second,
                figure.cpu_ms_per_image);
    std::fflush(stdout);
}

void bench_source(const Source& source, std::size_t count, double seconds) {
    PipelineSettings settings;
    settings.image_size = source.size;
    settings.image_format = source.format;
    std::vector<EncodedImage> files;
    std::size_t encoded_bytes = 0;
    for (std::size_t i = 0; i < count; ++i) {
        files.push_back(
            {"synthetic", encode_image(synthetic_image(source.size, 0x1F0E5EEDULL, static_cast<std::int64_t>(i)),
                                       source.format, 90)});
        encoded_bytes += files.back().bytes.size();
    }
    std::printf("| %-18s | %-38s | %7s | %10s | %8s | %12s |\n", source.label,
                ("(" + std::to_string(encoded_bytes / count / 1024) + " KiB a file)").c_str(), "", "", "", "");
    std::vector<RgbImage> decoded(count);
    for (std::size_t i = 0; i < count; ++i) decode_image(files[i].bytes, "synthetic", decoded[i]);
    for (const std::size_t threads : {std::size_t{1}, std::size_t{2}}) {
        ThreadPool pool(threads);
        std::vector<RgbImage> decode_out(threads);
        row(source.label, "decode", threads, measure_on(pool, count, seconds, [&](std::size_t i, std::size_t w) {
                decode_image(files[i].bytes, "synthetic", decode_out[w]);
            }));
        for (const Model& model : models()) {
            std::vector<RgbImage> resized(threads);
            std::vector<ResizeScratch> scratch(threads);
            row(source.label, std::string("resize ") + model.label, threads,
                measure_on(pool, count, seconds, [&](std::size_t i, std::size_t w) {
                    resize_image(decoded[i], model.steps, resized[w], scratch[w]);
                }));
            RgbImage input;
            ResizeScratch one;
            resize_image(decoded[0], model.steps, input, one);
            std::vector<float> batch(count * image_slot_bytes(model.steps) / sizeof(float));
            const auto bytes = std::as_writable_bytes(std::span(batch));
            row(source.label, std::string("normalize f32 nchw ") + model.label, threads,
                measure_on(pool, count, seconds, [&](std::size_t i, std::size_t) {
                    normalize_into(input, model.steps, bytes, static_cast<std::int64_t>(i));
                }));
            PreprocessScratch pre;
            std::vector<const EncodedImage*> pointers;
            for (const auto& f : files) pointers.push_back(&f);
            row(source.label, std::string("all three ") + model.label, threads,
                measure(count, seconds, [&] { preprocess_batch(pool, pointers, model.steps, bytes, pre); }));
        }
    }
}

std::string first_line_with(const char* file, const std::string& key) {
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
        if (line.rfind(key, 0) == 0) return line;
    return "unknown";
}

}  // namespace
}  // namespace inferbench::pipeline

int main(int argc, char** argv) {
    using namespace inferbench::pipeline;
    const double seconds = argc > 1 ? std::atof(argv[1]) : 1.0;
    const auto count = static_cast<std::size_t>(argc > 2 ? std::atoi(argv[2]) : 16);
    if (seconds <= 0 || count == 0) {
        std::fprintf(stderr, "usage: pipeline_stages [SECONDS_PER_ROW > 0] [IMAGES > 0]\n");
        return 2;
    }
    std::printf("CPU: %s\nload average at start: %s\n\n", first_line_with("/proc/cpuinfo", "model name").c_str(),
                first_line_with("/proc/loadavg", "").c_str());
    std::printf("| %-18s | %-38s | %7s | %10s | %8s | %12s |\n", "images", "stage", "threads", "images/s", "ms/image",
                "cpu ms/image");
    std::printf("|%s|%s|%s|%s|%s|%s|\n", std::string(20, '-').c_str(), std::string(40, '-').c_str(),
                std::string(9, '-').c_str(), std::string(12, '-').c_str(), std::string(10, '-').c_str(),
                std::string(14, '-').c_str());
    const Source sources[] = {{"640x480 jpeg q90", {640, 480}, inferbench::ImageFormat::jpeg},
                              {"1920x1080 jpeg q90", {1920, 1080}, inferbench::ImageFormat::jpeg},
                              {"640x480 png", {640, 480}, inferbench::ImageFormat::png}};
    for (const Source& source : sources) bench_source(source, count, seconds);
    std::printf(
        "\nms/image: wall time per image on one thread (threads / images per second); cpu ms/image: the\n"
        "process's CPU time per image, all threads (less sensitive to a busy host than the wall figures).\n"
        "load average at end: %s\n",
        first_line_with("/proc/loadavg", "").c_str());
    return 0;
}
