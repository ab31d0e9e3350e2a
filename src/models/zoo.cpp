#include "models/zoo.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <fstream>
#include <optional>
#include <span>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "models/zoo_builders.hpp"

namespace inferbench::models {

namespace fs = std::filesystem;

namespace {

// Bump whenever any builder's output bytes change, so caches written by older versions are not
// mistaken for current ones.
constexpr int kGeneratorVersion = 1;

// `model` is the zoo name, for error messages.
using BuildFn = GraphBuilder (*)(std::string_view model, std::uint64_t seed, const ZooOptions& options);

// The option an architecture takes, or its published size where the option is 0; a
// std::logic_error for the other option, which the architecture has no use for.
std::int64_t image_size(std::string_view model, const ZooOptions& options, std::int64_t published) {
    if (options.sequence_length != 0) {
        throw std::logic_error(fmt::format("{} takes an image size, not a sequence length", model));
    }
    return options.image_size != 0 ? options.image_size : published;
}

std::int64_t sequence_length(std::string_view model, const ZooOptions& options, std::int64_t published) {
    if (options.image_size != 0) {
        throw std::logic_error(fmt::format("{} takes a sequence length, not an image size", model));
    }
    return options.sequence_length != 0 ? options.sequence_length : published;
}

// The builders, each behind one BuildFn signature.
template <GraphBuilder (*kBuild)(std::uint64_t, std::int64_t), std::int64_t kPublished>
GraphBuilder sized(std::string_view model, std::uint64_t seed, const ZooOptions& options) {
    return kBuild(seed, image_size(model, options, kPublished));
}

template <std::int64_t kPublished>
GraphBuilder yolov3(std::string_view model, std::uint64_t seed, const ZooOptions& options) {
    return build_yolov3(image_size(model, options, kPublished), seed);
}

template <const YoloV5Config& kConfig>
GraphBuilder yolov5(std::string_view model, std::uint64_t seed, const ZooOptions& options) {
    YoloV5Config config = kConfig;
    config.image_size = image_size(model, options, config.image_size);
    return build_yolov5(config, seed);
}

template <const SwinConfig& kConfig>
GraphBuilder swin(std::string_view model, std::uint64_t seed, const ZooOptions& options) {
    SwinConfig config = kConfig;
    config.image_size = image_size(model, options, config.image_size);
    return build_swin(config, seed);
}

template <const BertConfig& kConfig>
GraphBuilder bert(std::string_view model, std::uint64_t seed, const ZooOptions& options) {
    BertConfig config = kConfig;
    config.sequence_length = sequence_length(model, options, config.sequence_length);
    return build_bert(config, seed);
}

struct ZooEntry {
    ZooModel model;
    BuildFn build;  // nullptr: no file
};

const std::vector<ZooEntry>& entries() {
    static const std::vector<ZooEntry> table = {
        {{"resnet50", "ResNet-50 v1.5 image classifier, 224x224 RGB, 1000 classes",
          "He et al., Deep Residual Learning for Image Recognition, CVPR 2016 (arXiv:1512.03385); "
          "v1.5 as torchvision and MLPerf Inference",
          25'557'032},
         &sized<build_resnet50, kImageNetImageSize>},
        {{"mobilenet", "MobileNet v1 1.0 224 image classifier, 224x224 RGB, 1000 classes",
          "Howard et al., MobileNets: Efficient Convolutional Neural Networks for Mobile Vision "
          "Applications, 2017 (arXiv:1704.04861); layout as TF-slim mobilenet_v1",
          4'231'976},
         &sized<build_mobilenet, kImageNetImageSize>},
        {{"mobilenet-v2", "MobileNet v2 1.0 224 image classifier, 224x224 RGB, 1000 classes (logits)",
          "Sandler et al., MobileNetV2: Inverted Residuals and Linear Bottlenecks, CVPR 2018 "
          "(arXiv:1801.04381); layout and parameter count as torchvision mobilenet_v2",
          3'504'872},
         &sized<build_mobilenet_v2, kImageNetImageSize>},
        // TF's trainable variables (BN gamma and beta); 6,807,167 with BN folded into biases, as in
        // MLPerf's frozen graph. See zoo_ssd_mobilenet.cpp.
        {{"ssd-mobilenet",
          "SSD-MobileNet v1 object detector (MLPerf Inference ssd-mobilenet), 300x300 RGB, COCO 91 classes; "
          "outputs raw box regressions [batch,1917,4] and class logits [batch,1917,91], no box decoding or NMS",
          "Liu et al., SSD: Single Shot MultiBox Detector, ECCV 2016 (arXiv:1512.02325) with a MobileNet v1 "
          "backbone (arXiv:1704.04861); as TF object detection's ssd_mobilenet_v1_coco, the MLPerf Inference model",
          6'819'839},
         &sized<build_ssd_mobilenet, kSsdMobilenetImageSize>},
        {{"ssd-resnet34",
          "SSD-ResNet34 object detector (MLPerf Inference ssd-resnet34), 1200x1200 RGB, COCO 81 classes incl. "
          "background; outputs raw box regressions [batch,4,15130] and class logits [batch,81,15130], no box "
          "decoding or NMS",
          "Liu et al., SSD: Single Shot MultiBox Detector, ECCV 2016 (arXiv:1512.02325) with a ResNet-34 "
          "backbone (arXiv:1512.03385); as mlcommons/inference vision/classification_and_detection/python/"
          "models/ssd_r34.py",
          19'972'534},
         &sized<build_ssd_resnet34, kSsdResnet34ImageSize>},
        {{"3d-unet",
          "3D U-Net KiTS19 segmenter (MLPerf Inference 3d-unet), 1x128x128x128 volume, 3 classes; outputs "
          "per-voxel logits, no sliding window",
          "Cicek et al., 3D U-Net, MICCAI 2016 (arXiv:1606.06650), nnU-Net layout (Isensee et al. 2021); as "
          "mlcommons/inference vision/medical_imaging/3d-unet-kits19",
          31'190'243},
         &sized<build_unet3d, kUnet3dVolume>},
        // The MLPerf Inference BERT model is BertForQuestionAnswering (SQuAD v1.1, sequence 384):
        // BERT without its pooler, plus a Linear(hidden, 2) span head. The paper rounds ("BERT-large
        // 340M, BERT-base 110M", Devlin et al. 2018); these are the exact counts of HuggingFace's
        // bert-large-uncased / bert-base-uncased BertForQuestionAnswering (BertModel's 335,141,888
        // and 109,482,240, less the pooler, plus the head).
        {{"bert",
          "BERT-large uncased with the SQuAD span head (MLPerf Inference BERT), 24 layers, hidden 1024, "
          "16 heads, sequence length 384",
          "Devlin et al., BERT: Pre-training of Deep Bidirectional Transformers for Language "
          "Understanding, NAACL 2019 (arXiv:1810.04805); as HuggingFace BertForQuestionAnswering, "
          "the MLPerf Inference SQuAD v1.1 model",
          334'094'338},
         &bert<kBertLarge>},
        {{"bert-base",
          "BERT-base uncased with the SQuAD span head, 12 layers, hidden 768, 12 heads, sequence length 384",
          "Devlin et al., BERT: Pre-training of Deep Bidirectional Transformers for Language "
          "Understanding, NAACL 2019 (arXiv:1810.04805); as HuggingFace BertForQuestionAnswering",
          108'893'186},
         &bert<kBertBase>},
        // Trainable parameters with BN gamma and beta, as darknet and ultralytics' training-time
        // summaries count them. See zoo_yolov3.cpp.
        {{"yolov3",
          "YOLOv3 object detector (Darknet-53 + 3-scale head), 416x416 RGB, COCO 80 classes; outputs the raw "
          "head convs [batch,255,13|26|52,13|26|52], no decoding or NMS",
          "Redmon & Farhadi, YOLOv3: An Incremental Improvement, 2018 (arXiv:1804.02767); Darknet-53 and "
          "head as darknet cfg/yolov3.cfg (ultralytics yolov3 reports 61.9M)",
          61'949'149},
         &yolov3<416>},
        {{"yolov3-608",
          "YOLOv3 object detector (Darknet-53 + 3-scale head), 608x608 RGB, COCO 80 classes; outputs the raw "
          "head convs [batch,255,19|38|76,19|38|76], no decoding or NMS",
          "Redmon & Farhadi, YOLOv3: An Incremental Improvement, 2018 (arXiv:1804.02767); Darknet-53 and "
          "head as darknet cfg/yolov3.cfg (ultralytics yolov3 reports 61.9M)",
          61'949'149},
         &yolov3<608>},
        // ultralytics prints two counts: the training summary's (BN unfused, as the zoo counts:
        // 7,235,389 / 21,190,557 / 46,563,709 / 86,749,405) and, after model.fuse() in val.py and
        // detect.py, the README's 7.2M / 21.2M / 46.5M / 86.7M (7,225,885 / 21,172,173 / 46,533,693 /
        // 86,705,005: each BN's gamma and beta become one conv bias).
        {{"yolov5s",
          "ultralytics YOLOv5s v7.0 object detector (depth 0.33, width 0.50), 640x640 RGB, COCO 80 classes; "
          "outputs the raw Detect convs [batch,255,80|40|20,80|40|20], no decoding or NMS",
          "ultralytics YOLOv5 v7.0 (github.com/ultralytics/yolov5, models/yolov5s.yaml), 7.2M parameters as "
          "published (7,225,885 with BN folded into the convs)",
          7'235'389},
         &yolov5<kYoloV5s>},
        {{"yolov5m",
          "ultralytics YOLOv5m v7.0 object detector (depth 0.67, width 0.75), 640x640 RGB, COCO 80 classes; "
          "outputs the raw Detect convs [batch,255,80|40|20,80|40|20], no decoding or NMS",
          "ultralytics YOLOv5 v7.0 (github.com/ultralytics/yolov5, models/yolov5m.yaml), 21.2M parameters as "
          "published (21,172,173 with BN folded into the convs)",
          21'190'557},
         &yolov5<kYoloV5m>},
        {{"yolov5l",
          "ultralytics YOLOv5l v7.0 object detector (depth 1.0, width 1.0), 640x640 RGB, COCO 80 classes; "
          "outputs the raw Detect convs [batch,255,80|40|20,80|40|20], no decoding or NMS",
          "ultralytics YOLOv5 v7.0 (github.com/ultralytics/yolov5, models/yolov5l.yaml), 46.5M parameters as "
          "published (46,533,693 with BN folded into the convs)",
          46'563'709},
         &yolov5<kYoloV5l>},
        {{"yolov5x",
          "ultralytics YOLOv5x v7.0 object detector (depth 1.33, width 1.25), 640x640 RGB, COCO 80 classes; "
          "outputs the raw Detect convs [batch,255,80|40|20,80|40|20], no decoding or NMS",
          "ultralytics YOLOv5 v7.0 (github.com/ultralytics/yolov5, models/yolov5x.yaml), 86.7M parameters as "
          "published (86,705,005 with BN folded into the convs)",
          86'749'405},
         &yolov5<kYoloV5x>},
        // Liu et al. round (28M / 50M / 88M / 197M); exact counts are timm's with 1000 classes.
        {{"swin-t",
          "Swin Transformer Tiny image classifier (C=96, depths 2-2-6-2, heads 3-6-12-24), window 7, "
          "patch 4, 224x224 RGB, 1000 classes",
          "Liu et al., Swin Transformer: Hierarchical Vision Transformer using Shifted Windows, ICCV 2021 "
          "(arXiv:2103.14030), 28M parameters; exact count as timm swin_tiny_patch4_window7_224",
          28'288'354},
         &swin<kSwinT>},
        {{"swin-s",
          "Swin Transformer Small image classifier (C=96, depths 2-2-18-2, heads 3-6-12-24), window 7, "
          "patch 4, 224x224 RGB, 1000 classes",
          "Liu et al., Swin Transformer: Hierarchical Vision Transformer using Shifted Windows, ICCV 2021 "
          "(arXiv:2103.14030), 50M parameters; exact count as timm swin_small_patch4_window7_224",
          49'606'258},
         &swin<kSwinS>},
        {{"swin-b",
          "Swin Transformer Base image classifier (C=128, depths 2-2-18-2, heads 4-8-16-32), window 7, "
          "patch 4, 224x224 RGB, 1000 classes",
          "Liu et al., Swin Transformer: Hierarchical Vision Transformer using Shifted Windows, ICCV 2021 "
          "(arXiv:2103.14030), 88M parameters; exact count as timm swin_base_patch4_window7_224",
          87'768'224},
         &swin<kSwinB>},
        {{"swin-l",
          "Swin Transformer Large image classifier (C=192, depths 2-2-18-2, heads 6-12-24-48), window 7, "
          "patch 4, 224x224 RGB, 1000 classes",
          "Liu et al., Swin Transformer: Hierarchical Vision Transformer using Shifted Windows, ICCV 2021 "
          "(arXiv:2103.14030), 197M parameters; exact count as timm swin_large_patch4_window7_224",
          196'532'476},
         &swin<kSwinL>},
        {{"null", "No model: the null backend's empty workload, for measuring harness overhead", "inferbench",
          0},
         nullptr},
    };
    return table;
}

const ZooEntry* find_entry(std::string_view name) {
    const auto& table = entries();
    const auto it =
        std::ranges::find(table, name, [](const ZooEntry& e) { return std::string_view(e.model.name); });
    return it == table.end() ? nullptr : &*it;
}

const ZooEntry& exportable_entry(std::string_view name) {
    const ZooEntry* entry = find_entry(name);
    if (entry == nullptr) {
        throw UserError(
            fmt::format("unknown zoo model '{}'; valid names: {}", name, fmt::join(zoo_names(), ", ")));
    }
    if (entry->build == nullptr) {
        throw UserError(fmt::format(
            "zoo model '{}' has no file to export: it is the null backend's empty workload", name));
    }
    return *entry;
}

// iostreams need not set errno; 0 would read "Success".
std::string errno_message(int error) {
    return error == 0 ? std::string("I/O error") : std::generic_category().message(error);
}

// Flushes a file (or directory) to disk, so a crash after the rename cannot leave a
// complete-looking name with missing contents. Best effort: not every file system supports it.
void sync_path(const fs::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

// A temp file in the target's directory, removed unless committed (renamed over the target).
class TempFile {
public:
    explicit TempFile(const fs::path& target) : target_(target) {
        static std::atomic<unsigned> counter{0};
        // Hidden, and unique per process and per call: concurrent exports never share one.
        path_ = target.parent_path() /
                fmt::format(".{}.tmp-{}-{}", target.filename().string(), ::getpid(), counter.fetch_add(1));
    }
    TempFile(const TempFile&) = delete;
    TempFile& operator=(const TempFile&) = delete;
    ~TempFile() {
        if (!committed_) {
            std::error_code ignored;
            fs::remove(path_, ignored);
        }
    }

    const fs::path& path() const { return path_; }

    void commit() {
        sync_path(path_);
        std::error_code ec;
        fs::rename(path_, target_, ec);
        if (ec) {
            throw EnvironmentError(
                fmt::format("cannot rename {} to {}: {}", path_.string(), target_.string(), ec.message()));
        }
        committed_ = true;
        sync_path(target_.parent_path());
    }

private:
    fs::path target_;
    fs::path path_;
    bool committed_ = false;
};

// Removes temp files that exports of `target` killed mid-write left behind. Only old ones: a live
// export (in this or another process sharing the cache) finishes within seconds.
void remove_stale_temp_files(const fs::path& target) {
    constexpr auto kStaleAfter = std::chrono::hours(1);
    const std::string prefix = fmt::format(".{}.tmp-", target.filename().string());
    const auto now = fs::file_time_type::clock::now();
    std::error_code ec;
    for (fs::directory_iterator it(target.parent_path().empty() ? "." : target.parent_path(), ec), end;
         !ec && it != end; it.increment(ec)) {
        std::error_code entry_ec;
        const auto written = it->last_write_time(entry_ec);
        if (it->path().filename().string().starts_with(prefix) && !entry_ec && now - written > kStaleAfter) {
            fs::remove(it->path(), entry_ec);
        }
    }
}

void write_model(const GraphBuilder& graph, const fs::path& target) {
    remove_stale_temp_files(target);

    TempFile temp(target);
    errno = 0;
    std::ofstream out(temp.path(), std::ios::binary | std::ios::trunc);
    if (!out) {
        throw EnvironmentError(
            fmt::format("cannot create {}: {}", temp.path().string(), errno_message(errno)));
    }
    graph.write(out);
    out.close();
    if (!out) {
        throw EnvironmentError(
            fmt::format("cannot write {}: {} (disk full? set another model cache directory)",
                        temp.path().string(), errno_message(errno)));
    }
    temp.commit();
}

}  // namespace

const std::vector<ZooModel>& zoo() {
    static const std::vector<ZooModel> models = [] {
        std::vector<ZooModel> out;
        for (const auto& e : entries()) out.push_back(e.model);
        return out;
    }();
    return models;
}

const ZooModel* find_zoo_model(std::string_view name) {
    const ZooEntry* entry = find_entry(name);
    return entry == nullptr ? nullptr : &zoo()[static_cast<std::size_t>(entry - entries().data())];
}

std::vector<std::string> zoo_names() {
    std::vector<std::string> names;
    for (const auto& m : zoo()) names.push_back(m.name);
    return names;
}

void check_input_size(std::string_view model, std::int64_t size, std::int64_t minimum, std::int64_t multiple) {
    if (size < minimum || size % multiple != 0) {
        throw std::logic_error(fmt::format("{}: input size {} is not {}", model, size,
                                           multiple > 1 ? fmt::format("a multiple of {} from {}", multiple, minimum)
                                                        : fmt::format("at least {}", minimum)));
    }
}

GraphBuilder build_zoo_model(std::string_view name, std::uint64_t seed, const ZooOptions& options) {
    const ZooEntry& entry = exportable_entry(name);
    if (options.batch < 0) throw UserError(fmt::format("batch size {} must be >= 1", options.batch));
    GraphBuilder graph = entry.build(name, seed, options);
    graph.set_producer_version(fmt::format("zoo-g{}", kGeneratorVersion));
    // A reader must not take a model built at another input size for the published one.
    std::string resized;
    if (options.image_size != 0) {
        resized = fmt::format(" Built at input size {}, not the published one.", options.image_size);
    }
    if (options.sequence_length != 0) {
        resized = fmt::format(" Built for {} tokens, not the published sequence length.", options.sequence_length);
    }
    graph.set_doc_string(fmt::format("{}.{} Random weights (seed {}), for benchmarking only. Source: {}",
                                     entry.model.description, resized, seed, entry.model.source));
    if (options.batch > 0 && graph.bind_dimension(kBatchDimName, options.batch) == 0) {
        throw std::logic_error(fmt::format("{}: no '{}' dimension to fix", name, kBatchDimName));
    }
    graph.add_metadata("inferbench.zoo_model", std::string(name));
    graph.add_metadata("inferbench.generator_version", std::to_string(kGeneratorVersion));
    graph.add_metadata("inferbench.seed", std::to_string(seed));
    if (options.image_size != 0) graph.add_metadata("inferbench.image_size", std::to_string(options.image_size));
    if (options.sequence_length != 0) {
        graph.add_metadata("inferbench.sequence_length", std::to_string(options.sequence_length));
    }
    return graph;
}

std::string zoo_model_bytes(std::string_view name, std::uint64_t seed) {
    return build_zoo_model(name, seed).serialize();
}

ReadModel read_zoo_or_file(const std::string& name_or_path, std::uint64_t seed) {
    if (find_zoo_model(name_or_path) != nullptr) {
        const std::string bytes = zoo_model_bytes(name_or_path, seed);
        return {onnx::read_onnx(std::as_bytes(std::span(bytes.data(), bytes.size())), name_or_path),
                static_cast<std::int64_t>(bytes.size())};
    }
    std::error_code ec;
    const auto file_bytes = static_cast<std::int64_t>(fs::file_size(name_or_path, ec));
    if (ec) throw UserError(fmt::format("{}: cannot read this file: {}", name_or_path, ec.message()));
    return {onnx::read_onnx_file(name_or_path), file_bytes};
}

fs::path export_onnx(std::string_view name, const fs::path& cache_dir, std::uint64_t seed, std::int64_t batch) {
    return export_onnx(name, cache_dir, seed, ZooOptions{.batch = batch});
}

fs::path export_onnx(std::string_view name, const fs::path& cache_dir, std::uint64_t seed, const ZooOptions& options) {
    exportable_entry(name);  // name errors first, before touching the file system
    if (options.batch < 0) throw UserError(fmt::format("batch size {} must be >= 1 (or 0: symbolic)", options.batch));
    std::string suffix;
    if (options.image_size != 0) suffix += fmt::format("-i{}", options.image_size);
    if (options.sequence_length != 0) suffix += fmt::format("-t{}", options.sequence_length);
    if (options.batch > 0) suffix += fmt::format("-b{}", options.batch);
    const fs::path target = cache_dir / fmt::format("{}-g{}-s{}{}.onnx", name, kGeneratorVersion, seed, suffix);
    std::error_code ec;
    if (fs::is_regular_file(target, ec)) {
        return target;  // complete by construction: only a finished temp file is ever renamed here
    }
    std::optional<GraphBuilder> graph;
    try {
        graph.emplace(build_zoo_model(name, seed, options));
    } catch (const std::logic_error& e) {  // a size the architecture cannot take
        throw UserError(fmt::format("{}; give a size the architecture takes", e.what()));
    }
    if (!cache_dir.empty()) fs::create_directories(cache_dir, ec);  // empty: the working directory
    if (ec) {
        throw EnvironmentError(
            fmt::format("cannot create model cache directory {}: {}", cache_dir.string(), ec.message()));
    }
    write_model(*graph, target);
    return target;
}

}  // namespace inferbench::models
