// The GPU pipeline stages on a GPU host (scripts/gpu/pipeline_stages.sh runs it): decodes a folder of JPEG files
// with nvJPEG, resizes and normalises them on the GPU and with the host's two-pass arithmetic (the same decoded
// pixels, so only the resize is compared), runs class-wise NMS and SSD decoding on seeded candidates, and times
// each stage. It writes into --work: decoded/ (the GPU's pixels of the first images, for the decode comparison
// against Pillow), nms/ and ssd/ (inputs and the GPU's kept boxes, for torchvision.ops.batched_nms), and
// gpu_stages.json (the resize comparison and every figure). Exit status: 0 all ran, 1 a stage failed (its reason
// printed and in the JSON), 2 the GPU stages cannot run here (the reason printed).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/pipeline.hpp"
#include "pipeline/gpu_stages.hpp"
#include "pipeline/resize_plan.hpp"

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
        if (key == "--images") args.images = value;
        else if (key == "--work") args.work = value;
        else if (key == "--device") args.device = std::stoi(value);
        else if (key == "--repeats") args.repeats = std::max(1, std::stoi(value));
        else if (key == "--dump-images") args.dump_images = std::max(0, std::stoi(value));
        else throw std::runtime_error("unknown option " + key);
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

// Decodes every file once: per file its size or the decoder's reason; the first images' pixels dumped.
ordered_json decode_all(const ip::GpuStages& gpu, const Images& images, const Args& args) {
    ordered_json out = ordered_json::array();
    fs::create_directories(args.work / "decoded");
    const auto decoded = gpu.decode_jpeg(spans_of(images, 0, images.files.size()));
    int dumped = 0;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
        ordered_json row{{"file", images.names[i]}, {"components", decoded[i].components}};
        if (!decoded[i].error.empty()) {
            row["error"] = decoded[i].error;
        } else {
            row["width"] = decoded[i].size.width;
            row["height"] = decoded[i].size.height;
            if (dumped < args.dump_images) {
                const auto raw = fmt::format("{:03}.rgb", i);
                write_raw(args.work / "decoded" / raw, gpu.decoded_pixels(static_cast<int>(i), decoded[i].size));
                row["pixels"] = raw;
                ++dumped;
            }
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
        out.push_back({{"batch", batch}, {"median_ms", s * 1e3}, {"images_per_s", static_cast<double>(batch) / s}});
    }
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

std::size_t element_bytes(const PipelineSteps& steps) {
    return steps.pixel_type == inferbench::PixelType::f32 ? 4 : steps.pixel_type == inferbench::PixelType::f16 ? 2 : 1;
}

// The largest difference between two batch tensors of the steps' pixel type, in the type's units (f16 as float).
ordered_json compare_tensors(const PipelineSteps& steps, const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
    const std::size_t size = element_bytes(steps);
    const std::size_t n = a.size() / size;
    double largest = 0.0;
    std::size_t differing = 0;
    for (std::size_t i = 0; i < n; ++i) {
        double x = 0.0;
        double y = 0.0;
        if (size == 4) {
            float fx = 0;
            float fy = 0;
            std::memcpy(&fx, &a[i * 4], 4);
            std::memcpy(&fy, &b[i * 4], 4);
            x = fx;
            y = fy;
        } else if (size == 2) {
            std::uint16_t hx = 0;
            std::uint16_t hy = 0;
            std::memcpy(&hx, &a[i * 2], 2);
            std::memcpy(&hy, &b[i * 2], 2);
            x = hx;  // bit patterns: equal or not, and by how many units in the last place
            y = hy;
        } else {
            x = static_cast<double>(std::to_integer<int>(a[i]));
            y = static_cast<double>(std::to_integer<int>(b[i]));
        }
        const double d = std::abs(x - y);
        if (d > 0) ++differing;
        largest = std::max(largest, d);
    }
    return {{"elements", n},
            {"differing", differing},
            {size == 2 ? "max_diff_f16_units" : "max_abs_diff", largest}};
}

ordered_json resize_case(const ip::GpuStages& gpu, const Images& images, const NamedSteps& c, int repeats) {
    constexpr std::size_t kBatch = 8;
    const auto spans = spans_of(images, 0, kBatch);
    const auto decoded = gpu.decode_jpeg(spans);
    std::vector<ip::ResizePlan> plans;
    for (const auto& d : decoded) plans.push_back(ip::make_resize_plan(c.steps, d.size));
    std::vector<ip::GpuPreprocessJob> jobs;
    for (std::size_t i = 0; i < plans.size(); ++i)
        jobs.push_back({static_cast<int>(i), static_cast<std::int64_t>(i), &plans[i]});
    const std::size_t image_elements = static_cast<std::size_t>(c.steps.input_size.width * c.steps.input_size.height * 3);
    const std::size_t bytes = kBatch * image_elements * element_bytes(c.steps);
    const auto batch = gpu.allocate(bytes);
    gpu.preprocess(c.steps, jobs, batch);
    std::vector<std::byte> gpu_tensor(bytes);
    gpu.copy_to_host(gpu_tensor, batch);
    // The host's arithmetic on the GPU's decoded pixels: the resize compared alone.
    std::vector<std::vector<std::uint8_t>> pixels;
    for (std::size_t i = 0; i < kBatch; ++i) pixels.push_back(gpu.decoded_pixels(static_cast<int>(i), decoded[i].size));
    std::vector<std::byte> cpu_tensor(bytes);
    const auto cpu_batch = [&] {
        for (std::size_t i = 0; i < kBatch; ++i) {
            const auto plan = ip::make_resize_plan(c.steps, decoded[i].size);
            const auto resampled = ip::resample_rgb8(plan, pixels[i].data());
            ip::write_normalized(c.steps, plan.placement, resampled, static_cast<std::int64_t>(i),
                                 reinterpret_cast<std::uint8_t*>(cpu_tensor.data()));
        }
    };
    cpu_batch();
    ordered_json out{{"case", c.name}, {"batch", kBatch}, {"gpu_vs_cpu", compare_tensors(c.steps, gpu_tensor, cpu_tensor)}};
    const double gpu_s = median_seconds(repeats, [&] {
        std::vector<ip::ResizePlan> p;
        for (const auto& d : decoded) p.push_back(ip::make_resize_plan(c.steps, d.size));
        std::vector<ip::GpuPreprocessJob> j;
        for (std::size_t i = 0; i < p.size(); ++i) j.push_back({static_cast<int>(i), static_cast<std::int64_t>(i), &p[i]});
        gpu.preprocess(c.steps, j, batch);
    });
    const double cpu_s = median_seconds(std::max(3, repeats / 4), cpu_batch);
    out["gpu_images_per_s"] = static_cast<double>(kBatch) / gpu_s;
    out["cpu_1thread_images_per_s"] = static_cast<double>(kBatch) / cpu_s;
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
    const std::vector<Case> cases = {{"random", 1000, 1, 0.5F, 1000},         {"random", 5000, 80, 0.5F, 5000},
                                     {"ties", 500, 4, 0.45F, 500},            {"zero_area", 300, 3, 0.5F, 300},
                                     {"all_overlapping", 1000, 3, 0.5F, 1000}, {"random", 5000, 80, 0.6F, 100},
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
        const std::string stem = fmt::format("case{}", k);
        write_raw(args.work / "nms" / (stem + ".boxes.f32"), candidates.boxes);
        write_raw(args.work / "nms" / (stem + ".scores.f32"), candidates.scores);
        write_raw(args.work / "nms" / (stem + ".labels.i32"), candidates.labels);
        const double s = median_seconds(args.repeats, [&] { gpu.nms(boxes, scores, labels, c.n, c.iou, c.max_detections); });
        out.push_back({{"case", stem}, {"kind", c.kind}, {"candidates", c.n}, {"classes", c.classes},
                       {"iou_threshold", c.iou}, {"max_detections", c.max_detections}, {"kept", kept},
                       {"gpu_median_ms", s * 1e3}});
    }
    return out;
}

// SSD-MobileNet's shape (1917 anchors, 91 classes, TensorFlow's (y, x, h, w) order, sigmoid scores) on seeded
// outputs and priors; the decoded detections for the reference decoder in the script.
ordered_json ssd_case(const ip::GpuStages& gpu, const Args& args) {
    constexpr int kAnchors = 1917;
    constexpr int kClasses = 91;
    constexpr int kBatch = 4;
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> unit(0.0F, 1.0F);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    std::vector<float> priors;
    for (int a = 0; a < kAnchors; ++a)
        priors.insert(priors.end(), {unit(rng), unit(rng), 0.05F + 0.5F * unit(rng), 0.05F + 0.5F * unit(rng)});
    std::vector<float> locs;
    std::vector<float> logits;
    for (int i = 0; i < kBatch * kAnchors * 4; ++i) locs.push_back(normal(rng));
    for (int i = 0; i < kBatch * kAnchors * kClasses; ++i) logits.push_back(normal(rng) * 2.0F - 4.0F);
    InferbenchGpuSsdDecode decode{};
    decode.anchors = kAnchors;
    decode.classes = kClasses;
    decode.yx_order = 1;
    decode.center_scale = 10.0F;
    decode.size_scale = 5.0F;
    decode.score_function = 1;
    decode.background_class = 0;
    decode.score_threshold = 0.3F;
    decode.priors = priors.data();
    const float iou = 0.6F;
    const int max_det = 100;
    const auto device_locs = upload(gpu, locs);
    const auto device_logits = upload(gpu, logits);
    const auto detections = gpu.ssd_detect(decode, iou, max_det, device_locs, device_logits, kBatch);
    fs::create_directories(args.work / "ssd");
    write_raw(args.work / "ssd" / "priors.f32", priors);
    write_raw(args.work / "ssd" / "locs.f32", locs);
    write_raw(args.work / "ssd" / "logits.f32", logits);
    ordered_json images = ordered_json::array();
    for (const auto& image : detections) {
        ordered_json rows = ordered_json::array();
        for (const auto& d : image)
            rows.push_back({{"box", {d.box[0], d.box[1], d.box[2], d.box[3]}}, {"score", d.score}, {"label", d.label},
                            {"candidate", d.candidate}});
        images.push_back(rows);
    }
    const double s = median_seconds(args.repeats, [&] {
        gpu.ssd_detect(decode, iou, max_det, device_locs, device_logits, kBatch);
    });
    return {{"anchors", kAnchors}, {"classes", kClasses}, {"batch", kBatch}, {"yx_order", true},
            {"center_scale", 10.0}, {"size_scale", 5.0}, {"score", "sigmoid"}, {"background_class", 0},
            {"score_threshold", 0.3}, {"iou_threshold", iou}, {"max_detections", max_det},
            {"detections", images}, {"gpu_median_ms_per_batch", s * 1e3}};
}

// Runs one part; a failure is recorded with its reason and the others go on.
bool run_part(ordered_json& report, const std::string& name, const std::function<ordered_json()>& part) {
    try {
        report[name] = part();
        std::cerr << "pipeline_gpu_stages: " << name << " done\n";
        return true;
    } catch (const std::exception& e) {
        report[name] = {{"failed", e.what()}};
        std::cerr << "pipeline_gpu_stages: " << name << " FAILED: " << e.what() << "\n";
        return false;
    }
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
            std::cerr << "pipeline_gpu_stages: GPU stages cannot run: " << opening.unavailable << "\n";
            return 2;
        }
        const ip::GpuStages& gpu = *opening.stages;
        ordered_json report{{"device", gpu.description()}};
        std::cerr << "pipeline_gpu_stages: " << gpu.description() << "\n";
        const Images all = read_images(args.images);
        bool ok = run_part(report, "decode", [&] { return decode_all(gpu, all, args); });
        const Images good = subset(all, good_files(gpu, all));
        if (good.files.empty()) throw std::runtime_error("no file of " + args.images.string() + " decoded on the GPU");
        ok &= run_part(report, "decode_throughput", [&] { return time_decode(gpu, good, args.repeats); });
        ok &= run_part(report, "resize", [&] {
            ordered_json rows = ordered_json::array();
            for (const auto& c : resize_cases()) rows.push_back(resize_case(gpu, good, c, args.repeats));
            return rows;
        });
        ok &= run_part(report, "nms", [&] { return nms_cases(gpu, args); });
        ok &= run_part(report, "ssd", [&] { return ssd_case(gpu, args); });
        std::ofstream(args.work / "gpu_stages.json") << report.dump(2) << "\n";
        return ok ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "pipeline_gpu_stages: " << e.what() << "\n";
        return 1;
    }
}
