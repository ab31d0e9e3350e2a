// The GPU pipeline stages on a GPU host (scripts/gpu/pipeline_stages.sh runs it) against the CPU stages, with the
// throughput of each: nvJPEG decode against pipeline/image_codec's libjpeg-turbo decode (pixels within a tolerance:
// the IDCT and chroma upsampling differ), the GPU resize + normalise against resize_image + normalize_into on the
// same decoded pixels (the same bytes), a whole batch's pre-processing on the GPU against preprocess_batch on 1, 2
// and all threads, class-wise NMS against batched_nms (the same indices) and SSD decoding + NMS against
// decode_boxes + select_detections (the same detections, scores within float rounding of exp). It writes into
// --work: decoded/ (the GPU's pixels of the first images, for the script's comparison with Pillow), nms/ (the
// candidates, for torchvision.ops.batched_nms) and gpu_stages.json (every comparison and figure). Exit status: 0
// all ran, 1 a part failed (its reason printed and in the JSON), 2 the GPU stages cannot run here (the reason).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/pipeline.hpp"
#include "pipeline/gpu_stages.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/nms.hpp"
#include "pipeline/postprocess.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/resize.hpp"
#include "pipeline/thread_pool.hpp"

namespace fs = std::filesystem;
using inferbench::ImageSize;
using inferbench::PipelineSteps;
using nlohmann::ordered_json;
namespace ip = inferbench::pipeline;

namespace {

struct Args {
    fs::path images;
    fs::path work;
    int device = 0;
    int repeats = 20;
    int dump_images = 16;
};

Args parse_args(int argc, char** argv) {
    Args args;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string key = argv[i];
        const std::string value = argv[i + 1];
        if (key == "--images")
            args.images = value;
        else if (key == "--work")
            args.work = value;
        else if (key == "--device")
            args.device = std::stoi(value);
        else if (key == "--repeats")
            args.repeats = std::max(1, std::stoi(value));
        else if (key == "--dump-images")
            args.dump_images = std::max(0, std::stoi(value));
        else
            throw std::runtime_error("unknown option " + key);
    }
    if (args.images.empty() || args.work.empty())
        throw std::runtime_error("usage: pipeline_gpu_stages --images DIR --work DIR [--device N] [--repeats N]");
    return args;
}

std::vector<std::uint8_t> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <typename T>
void write_raw(const fs::path& path, const std::vector<T>& values) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(T)));
    if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The median of `repeats` wall times of body() after two untimed runs, in seconds.
double median_seconds(int repeats, const std::function<void()>& body) {
    body();
    body();
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {
        const auto start = std::chrono::steady_clock::now();
        body();
        times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

struct Images {
    std::vector<std::string> names;
    std::vector<std::vector<std::uint8_t>> files;
};

Images read_images(const fs::path& folder) {
    std::vector<fs::path> paths;
    for (const auto& entry : fs::directory_iterator(folder))
        if (entry.is_regular_file()) paths.push_back(entry.path());
    std::sort(paths.begin(), paths.end());
    Images images;
    for (const auto& path : paths) {
        images.names.push_back(path.filename().string());
        images.files.push_back(read_file(path));
    }
    if (images.files.empty()) throw std::runtime_error("no files in " + folder.string());
    return images;
}

std::vector<std::span<const std::uint8_t>> spans_of(const Images& images, std::size_t first, std::size_t count) {
    std::vector<std::span<const std::uint8_t>> spans;
    for (std::size_t i = 0; i < count; ++i) {
        const auto& file = images.files[(first + i) % images.files.size()];
        spans.emplace_back(file.data(), file.size());
    }
    return spans;
}

// Pixel differences of two RGB8 images of one size: mean and largest absolute difference.
ordered_json pixel_difference(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b) {
    double total = 0.0;
    int largest = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const int d = std::abs(static_cast<int>(a[i]) - static_cast<int>(b[i]));
        total += d;
        largest = std::max(largest, d);
    }
    return {{"mean_abs", a.empty() ? 0.0 : total / static_cast<double>(a.size())}, {"max", largest}};
}

// Decodes every file once on the GPU and the CPU: per file its size or each decoder's reason, the pixels' difference;
// the first images' GPU pixels dumped for the script.
ordered_json decode_all(const ip::GpuStages& gpu, const Images& images, const Args& args) {
    ordered_json out = ordered_json::array();
    fs::create_directories(args.work / "decoded");
    const auto decoded = gpu.decode_jpeg(spans_of(images, 0, images.files.size()));
    int dumped = 0;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
        ordered_json row{{"file", images.names[i]}, {"components", decoded[i].components}};
        std::optional<ip::RgbImage> cpu;
        try {
            cpu = ip::decode_image(images.files[i], images.names[i]);
            row["cpu"] = fmt::format("{}x{}", cpu->width, cpu->height);
        } catch (const std::exception& e) {
            row["cpu_error"] = e.what();
        }
        if (!decoded[i].error.empty()) {
            row["error"] = decoded[i].error;
            out.push_back(row);
            continue;
        }
        row["width"] = decoded[i].size.width;
        row["height"] = decoded[i].size.height;
        const auto pixels = gpu.decoded_pixels(static_cast<int>(i), decoded[i].size);
        if (cpu && cpu->size() == decoded[i].size) row["gpu_vs_cpu"] = pixel_difference(pixels, cpu->pixels);
        if (dumped < args.dump_images) {
            const auto raw = fmt::format("{:03}.rgb", i);
            write_raw(args.work / "decoded" / raw, pixels);
            row["pixels"] = raw;
            ++dumped;
        }
        out.push_back(row);
    }
    return out;
}

// The good files (decoded without an error) among the first `limit`.
std::vector<std::size_t> good_files(const ip::GpuStages& gpu, const Images& images) {
    const auto decoded = gpu.decode_jpeg(spans_of(images, 0, images.files.size()));
    std::vector<std::size_t> good;
    for (std::size_t i = 0; i < decoded.size(); ++i)
        if (decoded[i].error.empty()) good.push_back(i);
    return good;
}

Images subset(const Images& images, const std::vector<std::size_t>& keep) {
    Images out;
    for (const auto i : keep) {
        out.names.push_back(images.names[i]);
        out.files.push_back(images.files[i]);
    }
    return out;
}

ordered_json time_decode(const ip::GpuStages& gpu, const Images& images, int repeats) {
    ordered_json out = ordered_json::array();
    for (const std::size_t batch : {std::size_t{1}, std::size_t{8}, std::size_t{32}}) {
        const auto spans = spans_of(images, 0, batch);
        const double s = median_seconds(repeats, [&] { gpu.decode_jpeg(spans); });
        out.push_back({{"place", "gpu"},
                       {"batch", batch},
                       {"median_ms", s * 1e3},
                       {"images_per_s", static_cast<double>(batch) / s}});
    }
    const auto spans = spans_of(images, 0, std::min<std::size_t>(images.files.size(), 32));
    ip::RgbImage image;
    const double s = median_seconds(std::max(3, repeats / 4), [&] {
        for (std::size_t i = 0; i < spans.size(); ++i) ip::decode_image(spans[i], images.names[i], image);
    });
    out.push_back({{"place", "cpu 1 thread (libjpeg-turbo)"},
                   {"batch", spans.size()},
                   {"median_ms", s * 1e3},
                   {"images_per_s", static_cast<double>(spans.size()) / s}});
    return out;
}

struct NamedSteps {
    std::string name;
    PipelineSteps steps;
};

std::vector<NamedSteps> resize_cases() {
    PipelineSteps imagenet;
    imagenet.resize = inferbench::ResizeRule::shorter_side_crop;
    imagenet.input_size = {224, 224};
    imagenet.resize_shorter = 256;
    imagenet.mean = {123.675F, 116.28F, 103.53F};
    imagenet.std = {58.395F, 57.12F, 57.375F};
    PipelineSteps yolo;
    yolo.resize = inferbench::ResizeRule::letterbox;
    yolo.input_size = {640, 640};
    yolo.std = {255.0F, 255.0F, 255.0F};
    PipelineSteps ssd;
    ssd.resize = inferbench::ResizeRule::plain;
    ssd.input_size = {300, 300};
    ssd.layout = inferbench::TensorLayout::nhwc;
    ssd.pixel_type = inferbench::PixelType::u8;
    PipelineSteps half = imagenet;
    half.pixel_type = inferbench::PixelType::f16;
    half.bgr = true;
    return {{"shorter_side_crop 256/224 f32 nchw", imagenet},
            {"letterbox 640 f32 nchw", yolo},
            {"plain 300 u8 nhwc", ssd},
            {"shorter_side_crop 256/224 f16 nchw bgr", half}};
}

// Elements of two batch tensors that differ, counted by the steps' element size.
ordered_json compare_tensors(const PipelineSteps& steps, const std::vector<std::byte>& a,
                             const std::vector<std::byte>& b) {
    const std::size_t size =
        ip::image_slot_bytes(steps) / static_cast<std::size_t>(steps.input_size.width * steps.input_size.height * 3);
    std::size_t differing = 0;
    for (std::size_t i = 0; i + size <= a.size(); i += size)
        if (std::memcmp(&a[i], &b[i], size) != 0) ++differing;
    return {{"elements", a.size() / size}, {"differing", differing}};
}

std::vector<ip::GpuPreprocessJob> jobs_for(const std::vector<ip::GpuDecodedImage>& decoded) {
    std::vector<ip::GpuPreprocessJob> jobs;
    for (std::size_t i = 0; i < decoded.size(); ++i)
        jobs.push_back({static_cast<int>(i), decoded[i].size, static_cast<std::int64_t>(i)});
    return jobs;
}

// The GPU resize + normalise of a batch against resize_image + normalize_into on the same (GPU-decoded) pixels.
ordered_json resize_case(const ip::GpuStages& gpu, const Images& images, const NamedSteps& c, int repeats) {
    constexpr std::size_t kBatch = 8;
    const auto decoded = gpu.decode_jpeg(spans_of(images, 0, kBatch));
    const auto jobs = jobs_for(decoded);
    const std::size_t bytes = kBatch * ip::image_slot_bytes(c.steps);
    const auto batch = gpu.allocate(bytes);
    gpu.preprocess(c.steps, jobs, batch);
    std::vector<std::byte> gpu_tensor(bytes);
    gpu.copy_to_host(gpu_tensor, batch);
    std::vector<ip::RgbImage> sources(kBatch);
    for (std::size_t i = 0; i < kBatch; ++i) {
        sources[i].reshape(decoded[i].size);
        sources[i].pixels = gpu.decoded_pixels(static_cast<int>(i), decoded[i].size);
    }
    std::vector<std::byte> cpu_tensor(bytes);
    ip::RgbImage resized;
    ip::ResizeScratch scratch;
    const auto cpu_batch = [&] {
        for (std::size_t i = 0; i < kBatch; ++i) {
            ip::resize_image(sources[i], c.steps, resized, scratch);
            ip::normalize_into(resized, c.steps, cpu_tensor, static_cast<std::int64_t>(i));
        }
    };
    cpu_batch();
    ordered_json out{
        {"case", c.name}, {"batch", kBatch}, {"gpu_vs_cpu", compare_tensors(c.steps, gpu_tensor, cpu_tensor)}};
    const double gpu_s = median_seconds(repeats, [&] { gpu.preprocess(c.steps, jobs, batch); });
    const double cpu_s = median_seconds(std::max(3, repeats / 4), cpu_batch);
    out["gpu_images_per_s"] = static_cast<double>(kBatch) / gpu_s;
    out["cpu_1thread_images_per_s"] = static_cast<double>(kBatch) / cpu_s;
    return out;
}

// A whole batch's pre-processing (decode, resize, normalise) from JPEG bytes in memory: the GPU's against
// preprocess_batch's on 1, 2 and all of this machine's threads, at batch 1 and 32.
ordered_json preprocess_throughput(const ip::GpuStages& gpu, const Images& images, const PipelineSteps& steps,
                                   int repeats) {
    ordered_json out = ordered_json::array();
    for (const std::size_t batch_size : {std::size_t{1}, std::size_t{32}}) {
        std::vector<ip::EncodedImage> encoded;
        for (std::size_t i = 0; i < batch_size; ++i)
            encoded.push_back({images.names[i % images.names.size()], images.files[i % images.files.size()]});
        std::vector<const ip::EncodedImage*> pointers;
        for (const auto& e : encoded) pointers.push_back(&e);
        // The GPU's batch as a pipeline cell runs it (gpu_preprocess_batch): every image must pass.
        const auto batch = gpu.allocate(batch_size * ip::image_slot_bytes(steps));
        const auto first = ip::gpu_preprocess_batch(gpu, pointers, steps, batch);
        if (!first.failures.empty() || first.resize.images != static_cast<std::int64_t>(batch_size))
            throw std::runtime_error(fmt::format("gpu_preprocess_batch: {} of {} images failed{}",
                                                 first.failures.size(), batch_size,
                                                 first.failures.empty() ? "" : ": " + first.failures.front().message));
        const double gpu_s = median_seconds(repeats, [&] { ip::gpu_preprocess_batch(gpu, pointers, steps, batch); });
        out.push_back(
            {{"place", "gpu"},
             {"batch", batch_size},
             {"images_per_s", static_cast<double>(batch_size) / gpu_s},
             {"ms_per_batch", gpu_s * 1e3},
             {"decode_ms", static_cast<double>(first.decode.end_ns - first.decode.start_ns) / 1e6},
             {"resize_normalize_ms", static_cast<double>(first.resize.end_ns - first.resize.start_ns) / 1e6}});
        std::vector<std::byte> host(batch_size * ip::image_slot_bytes(steps));
        const std::size_t cores = std::max(1U, std::thread::hardware_concurrency());
        for (const std::size_t threads : {std::size_t{1}, std::size_t{2}, cores}) {
            ip::ThreadPool pool(threads);
            ip::PreprocessScratch scratch;
            const double cpu_s = median_seconds(std::max(3, repeats / 4),
                                                [&] { ip::preprocess_batch(pool, pointers, steps, host, scratch); });
            out.push_back({{"place", fmt::format("cpu {} threads", threads)},
                           {"batch", batch_size},
                           {"images_per_s", static_cast<double>(batch_size) / cpu_s},
                           {"ms_per_batch", cpu_s * 1e3}});
        }
    }
    return out;
}

struct Candidates {
    std::vector<float> boxes;
    std::vector<float> scores;
    std::vector<std::int32_t> labels;
};

Candidates make_candidates(const std::string& kind, int n, int classes, std::mt19937& rng) {
    std::uniform_real_distribution<float> coord(0.0F, 1000.0F);
    std::uniform_real_distribution<float> side(1.0F, 200.0F);
    std::uniform_real_distribution<float> unit(0.0F, 1.0F);
    std::uniform_int_distribution<int> label(0, classes - 1);
    Candidates c;
    for (int i = 0; i < n; ++i) {
        float x = coord(rng);
        float y = coord(rng);
        float w = side(rng);
        float h = side(rng);
        if (kind == "all_overlapping") {
            x = 100.0F + unit(rng) * 4.0F;
            y = 100.0F + unit(rng) * 4.0F;
            w = 300.0F;
            h = 300.0F;
        }
        if (kind == "zero_area" && i % 2 == 0) w = 0.0F;
        c.boxes.insert(c.boxes.end(), {x, y, x + w, y + h});
        float score = unit(rng);
        if (kind == "ties") score = 0.5F + 0.2F * static_cast<float>(i % 3);
        c.scores.push_back(score);
        c.labels.push_back(label(rng));
    }
    return c;
}

template <typename T>
ip::GpuBuffer upload(const ip::GpuStages& gpu, const std::vector<T>& values) {
    auto buffer = gpu.allocate(values.size() * sizeof(T));
    gpu.copy_to_device(buffer, std::as_bytes(std::span<const T>(values)));
    return buffer;
}

ordered_json nms_cases(const ip::GpuStages& gpu, const Args& args) {
    struct Case {
        std::string kind;
        int n;
        int classes;
        float iou;
        int max_detections;
    };
    const std::vector<Case> cases = {
        {"random", 1000, 1, 0.5F, 1000},   {"random", 5000, 80, 0.5F, 5000},         {"ties", 500, 4, 0.45F, 500},
        {"zero_area", 300, 3, 0.5F, 300},  {"all_overlapping", 1000, 3, 0.5F, 1000}, {"random", 5000, 80, 0.6F, 100},
        {"random", 20000, 80, 0.5F, 20000}};
    fs::create_directories(args.work / "nms");
    std::mt19937 rng(20261205);
    ordered_json out = ordered_json::array();
    for (std::size_t k = 0; k < cases.size(); ++k) {
        const Case& c = cases[k];
        const auto candidates = make_candidates(c.kind, c.n, c.classes, rng);
        const auto boxes = upload(gpu, candidates.boxes);
        const auto scores = upload(gpu, candidates.scores);
        const auto labels = upload(gpu, candidates.labels);
        const auto kept = gpu.nms(boxes, scores, labels, c.n, c.iou, c.max_detections);
        std::vector<ip::Box> cpu_boxes;
        for (int i = 0; i < c.n; ++i)
            cpu_boxes.push_back({candidates.boxes[static_cast<std::size_t>(i) * 4],
                                 candidates.boxes[static_cast<std::size_t>(i) * 4 + 1],
                                 candidates.boxes[static_cast<std::size_t>(i) * 4 + 2],
                                 candidates.boxes[static_cast<std::size_t>(i) * 4 + 3]});
        const std::vector<std::int64_t> classes(candidates.labels.begin(), candidates.labels.end());
        auto cpu_kept = ip::batched_nms(cpu_boxes, candidates.scores, classes, c.iou);
        if (cpu_kept.size() > static_cast<std::size_t>(c.max_detections))
            cpu_kept.resize(static_cast<std::size_t>(c.max_detections));
        const bool identical = std::equal(kept.begin(), kept.end(), cpu_kept.begin(), cpu_kept.end());
        const double cpu_s = median_seconds(std::max(3, args.repeats / 4),
                                            [&] { ip::batched_nms(cpu_boxes, candidates.scores, classes, c.iou); });
        const std::string stem = fmt::format("case{}", k);
        write_raw(args.work / "nms" / (stem + ".boxes.f32"), candidates.boxes);
        write_raw(args.work / "nms" / (stem + ".scores.f32"), candidates.scores);
        write_raw(args.work / "nms" / (stem + ".labels.i32"), candidates.labels);
        const double s =
            median_seconds(args.repeats, [&] { gpu.nms(boxes, scores, labels, c.n, c.iou, c.max_detections); });
        out.push_back({{"case", stem},
                       {"kind", c.kind},
                       {"candidates", c.n},
                       {"classes", c.classes},
                       {"iou_threshold", c.iou},
                       {"max_detections", c.max_detections},
                       {"kept", kept},
                       {"identical_to_cpu_batched_nms", identical},
                       {"gpu_median_ms", s * 1e3},
                       {"cpu_median_ms", cpu_s * 1e3}});
    }
    return out;
}

// Detections compared: the same classes in the same order, boxes and scores within `tolerance` (relative to 1).
ordered_json compare_detections(const std::vector<std::vector<ip::Detection>>& gpu,
                                const std::vector<std::vector<ip::Detection>>& cpu, float tolerance) {
    ordered_json images = ordered_json::array();
    bool all_same = true;
    for (std::size_t b = 0; b < cpu.size(); ++b) {
        bool same = gpu[b].size() == cpu[b].size();
        double largest = 0.0;
        for (std::size_t i = 0; same && i < cpu[b].size(); ++i) {
            const auto& g = gpu[b][i];
            const auto& c = cpu[b][i];
            same = g.class_id == c.class_id;
            for (const auto& [x, y] :
                 {std::pair{g.box.x1, c.box.x1}, std::pair{g.box.y1, c.box.y1}, std::pair{g.box.x2, c.box.x2},
                  std::pair{g.box.y2, c.box.y2}, std::pair{g.score, c.score}})
                largest = std::max(
                    largest, std::abs(static_cast<double>(x - y)) / std::max(1.0, std::abs(static_cast<double>(y))));
        }
        same = same && largest <= tolerance;
        all_same = all_same && same;
        images.push_back(
            {{"gpu", gpu[b].size()}, {"cpu", cpu[b].size()}, {"max_relative_difference", largest}, {"same", same}});
    }
    return {{"images", images}, {"all_same", all_same}, {"tolerance", tolerance}};
}

// One SSD head on seeded outputs: the GPU's decoding + NMS against decode_boxes + select_detections.
ordered_json ssd_case(const ip::GpuStages& gpu, ip::BoxCoding coding, int repeats) {
    const bool tf = coding == ip::BoxCoding::ssd_tf_anchors;
    const std::vector<ip::Prior> priors = tf ? ip::ssd_mobilenet_priors(300) : ip::ssd_resnet34_priors();
    const std::int64_t classes = tf ? 91 : 81;
    const ImageSize input = tf ? ImageSize{300, 300} : ImageSize{1200, 1200};
    const float threshold = tf ? 0.3F : 0.05F;
    const float iou = tf ? 0.6F : 0.5F;
    const int max_det = tf ? 100 : 200;
    constexpr int kBatch = 8;
    const auto anchors = static_cast<std::int64_t>(priors.size());
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    std::vector<float> locs(static_cast<std::size_t>(kBatch * anchors * 4));
    std::vector<float> logits(static_cast<std::size_t>(kBatch * anchors * classes));
    for (float& v : locs) v = normal(rng);
    for (float& v : logits) v = tf ? normal(rng) * 2.0F - 4.0F : normal(rng) * 3.0F;
    const auto device_locs = upload(gpu, locs);
    const auto device_logits = upload(gpu, logits);
    const auto run_gpu = [&] {
        return gpu.ssd_detect(coding, priors, classes, input, threshold, iou, max_det, device_locs, device_logits,
                              kBatch);
    };
    const ip::FloatTensor outputs[] = {
        {locs, tf ? std::vector<std::int64_t>{kBatch, anchors, 4} : std::vector<std::int64_t>{kBatch, 4, anchors}},
        {logits, tf ? std::vector<std::int64_t>{kBatch, anchors, classes}
                    : std::vector<std::int64_t>{kBatch, classes, anchors}}};
    const auto run_cpu = [&] {
        const auto candidates = ip::decode_boxes({coding, 0}, outputs, input, threshold);
        std::vector<std::vector<ip::Detection>> detections;
        for (const auto& c : candidates) detections.push_back(ip::select_detections(c, iou, max_det));
        return detections;
    };
    ordered_json out{{"coding", std::string(ip::to_string(coding))},
                     {"anchors", anchors},
                     {"classes", classes},
                     {"batch", kBatch},
                     {"score_threshold", threshold},
                     {"iou_threshold", iou},
                     {"max_detections", max_det}};
    // exp on the GPU (expf) and the CPU (glibc) may differ in the last bit: scores and sizes within 1e-5.
    out["gpu_vs_cpu"] = compare_detections(run_gpu(), run_cpu(), 1e-5F);
    out["gpu_ms_per_batch"] = median_seconds(repeats, [&] { run_gpu(); }) * 1e3;
    out["cpu_1thread_ms_per_batch"] = median_seconds(std::max(3, repeats / 4), [&] { run_cpu(); }) * 1e3;
    return out;
}

// Runs one part; a failure is recorded with its reason and the others go on. The report is written after each
// part, so that a crash later leaves what was measured before it.
bool run_part(ordered_json& report, const fs::path& file, const std::string& name,
              const std::function<ordered_json()>& part) {
    bool ok = true;
    try {
        report[name] = part();
        std::cerr << "pipeline_gpu_stages: " << name << " done\n";
    } catch (const std::exception& e) {
        report[name] = {{"failed", e.what()}};
        std::cerr << "pipeline_gpu_stages: " << name << " FAILED: " << e.what() << "\n";
        ok = false;
    }
    std::ofstream(file) << report.dump(2) << "\n";
    return ok;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Args args = parse_args(argc, argv);
        fs::create_directories(args.work);
        ip::GpuStagesOptions options;
        options.device = args.device;
        auto opening = ip::GpuStages::open(options);
        if (!opening.stages) {
            std::cerr << "pipeline_gpu_stages: " << opening.unavailable << "\n";
            return 2;
        }
        const ip::GpuStages& gpu = *opening.stages;
        ordered_json report{{"device", gpu.description()}};
        std::cerr << "pipeline_gpu_stages: " << gpu.description() << "\n";
        const Images all = read_images(args.images);
        const fs::path file = args.work / "gpu_stages.json";
        bool ok = run_part(report, file, "decode", [&] { return decode_all(gpu, all, args); });
        const Images good = subset(all, good_files(gpu, all));
        if (good.files.empty()) throw std::runtime_error("no file of " + args.images.string() + " decoded on the GPU");
        ok &= run_part(report, file, "decode_throughput", [&] { return time_decode(gpu, good, args.repeats); });
        ok &= run_part(report, file, "resize", [&] {
            ordered_json rows = ordered_json::array();
            for (const auto& c : resize_cases()) rows.push_back(resize_case(gpu, good, c, args.repeats));
            return rows;
        });
        ok &= run_part(report, file, "preprocess_throughput",
                       [&] { return preprocess_throughput(gpu, good, resize_cases().front().steps, args.repeats); });
        ok &= run_part(report, file, "nms", [&] { return nms_cases(gpu, args); });
        ok &= run_part(report, file, "ssd", [&] {
            return ordered_json::array({ssd_case(gpu, ip::BoxCoding::ssd_tf_anchors, args.repeats),
                                        ssd_case(gpu, ip::BoxCoding::ssd_r34_dboxes, args.repeats)});
        });
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "pipeline_gpu_stages: " << e.what() << "\n";
        return 1;
    }
}
