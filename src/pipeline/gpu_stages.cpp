#include "pipeline/gpu_stages.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "pipeline/preprocess.hpp"
#include "pipeline/resample_math.hpp"
#include "pipeline/resize.hpp"
#include "pipeline/stage_timer.hpp"

namespace inferbench::pipeline {
namespace {

constexpr std::string_view kModuleFile = "libinferbench_pipeline_cuda.so";

using Error = std::array<char, 1024>;

void* symbol(void* handle, const char* name, const std::filesystem::path& path, std::string& missing) {
    void* address = dlsym(handle, name);
    if (!address && missing.empty())
        missing = fmt::format("{} has no {}; rebuild the GPU pipeline stages module", path.string(), name);
    return address;
}

std::string env_or(const char* name, const std::string& fallback) {
    if (!fallback.empty()) return fallback;
    const char* value = std::getenv(name);
    return value ? value : "";
}

static_assert(kResampleWeightBits == kResizeWeightBits, "the GPU resize's fixed point must be the CPU's");
static_assert(sizeof(Prior) == 4 * sizeof(float), "priors are passed to the module as (cx, cy, w, h) floats");

InferbenchGpuAxis gpu_axis(std::int64_t placed_begin, const ResizeWeights& w) {
    InferbenchGpuAxis axis{};
    axis.placed_begin = static_cast<int>(placed_begin);
    axis.placed_count = static_cast<int>(w.start.size());
    axis.max_taps = static_cast<int>(w.max_taps);
    axis.start = w.start.data();
    axis.taps = w.taps.data();
    axis.weights = w.weights.data();
    return axis;
}

}  // namespace

struct GpuStages::Api {
    decltype(&inferbench_gpu_stages_create) create = nullptr;
    decltype(&inferbench_gpu_stages_destroy) destroy = nullptr;
    decltype(&inferbench_gpu_stages_describe) describe = nullptr;
    decltype(&inferbench_gpu_alloc) alloc = nullptr;
    decltype(&inferbench_gpu_free) free = nullptr;
    decltype(&inferbench_gpu_copy) copy = nullptr;
    decltype(&inferbench_gpu_decode_jpeg) decode_jpeg = nullptr;
    decltype(&inferbench_gpu_decoded_pixels) decoded_pixels = nullptr;
    decltype(&inferbench_gpu_preprocess) preprocess = nullptr;
    decltype(&inferbench_gpu_nms) nms = nullptr;
    decltype(&inferbench_gpu_ssd_detect) ssd_detect = nullptr;
};

std::vector<std::filesystem::path> GpuStages::default_module_candidates() {
    if (const char* env = std::getenv("INFERBENCH_PIPELINE_CUDA_MODULE"); env && *env) return {env};
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto dir = ec ? std::filesystem::current_path() : exe.parent_path();
    return {dir / kModuleFile, dir / ".." / "lib" / "inferbench" / kModuleFile};
}

GpuStagesOpening GpuStages::open(const GpuStagesOptions& options) {
    const auto candidates = options.module_candidates.empty() ? default_module_candidates() : options.module_candidates;
    std::string tried;
    for (const auto& candidate : candidates) {
        std::error_code ec;
        if (!std::filesystem::exists(candidate, ec)) {
            tried += (tried.empty() ? "" : "; ") + candidate.string() + ": not there";
            continue;
        }
        void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = dlerror();
            tried += (tried.empty() ? "" : "; ") + std::string(why ? why : candidate.string());
            continue;
        }
        std::unique_ptr<GpuStages> stages(new GpuStages());
        stages->handle_ = handle;
        stages->path_ = candidate;
        std::string missing;
        const auto version = reinterpret_cast<decltype(&inferbench_gpu_stages_api_version)>(
            symbol(handle, "inferbench_gpu_stages_api_version", candidate, missing));
        if (!missing.empty()) return {nullptr, missing};
        if (version() != INFERBENCH_GPU_STAGES_API_VERSION)
            return {nullptr,
                    fmt::format("{} speaks GPU stages API {}, this inferbench {}; use the module built with it",
                                candidate.string(), version(), INFERBENCH_GPU_STAGES_API_VERSION)};
        auto api = std::make_unique<Api>();
        const auto bind = [&](auto& fn, const char* name) {
            fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(symbol(handle, name, candidate, missing));
        };
        bind(api->create, "inferbench_gpu_stages_create");
        bind(api->destroy, "inferbench_gpu_stages_destroy");
        bind(api->describe, "inferbench_gpu_stages_describe");
        bind(api->alloc, "inferbench_gpu_alloc");
        bind(api->free, "inferbench_gpu_free");
        bind(api->copy, "inferbench_gpu_copy");
        bind(api->decode_jpeg, "inferbench_gpu_decode_jpeg");
        bind(api->decoded_pixels, "inferbench_gpu_decoded_pixels");
        bind(api->preprocess, "inferbench_gpu_preprocess");
        bind(api->nms, "inferbench_gpu_nms");
        bind(api->ssd_detect, "inferbench_gpu_ssd_detect");
        if (!missing.empty()) return {nullptr, missing};
        stages->api_ = std::move(api);
        Error error{};
        const std::string nvjpeg = env_or("INFERBENCH_NVJPEG_LIBRARY", options.nvjpeg_library);
        if (stages->api_->create(options.device, nvjpeg.c_str(), &stages->stages_, error.data(), error.size()) != 0)
            return {nullptr, fmt::format("GPU stages cannot run on cuda:{}: {}", options.device, error.data())};
        return {std::move(stages), ""};
    }
    return {nullptr, fmt::format("no GPU pipeline stages module ({}); build inferbench where nvcc is found (it builds "
                                 "{}), or set INFERBENCH_PIPELINE_CUDA_MODULE",
                                 tried, kModuleFile)};
}

GpuStages::~GpuStages() {
    if (stages_ && api_) api_->destroy(stages_);
    if (handle_) dlclose(handle_);
}

std::string GpuStages::description() const {
    std::array<char, 512> text{};
    api_->describe(stages_, text.data(), text.size());
    return fmt::format("{}, module {}", text.data(), path_.string());
}

GpuBuffer::GpuBuffer(GpuBuffer&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)),
      data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

GpuBuffer& GpuBuffer::operator=(GpuBuffer&& other) noexcept {
    if (this != &other) {
        if (owner_) owner_->free(data_);
        owner_ = std::exchange(other.owner_, nullptr);
        data_ = std::exchange(other.data_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

GpuBuffer::~GpuBuffer() {
    if (owner_) owner_->free(data_);
}

void GpuStages::free(void* device) const { api_->free(stages_, device); }

GpuBuffer GpuStages::allocate(std::size_t bytes) const {
    GpuBuffer buffer;
    Error error{};
    if (api_->alloc(stages_, bytes, &buffer.data_, error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("GPU memory of {} bytes: {}", bytes, error.data()));
    buffer.owner_ = this;
    buffer.bytes_ = bytes;
    return buffer;
}

void GpuStages::copy_to_device(const GpuBuffer& device, std::span<const std::byte> host, std::size_t offset) const {
    if (offset > device.bytes() || host.size() > device.bytes() - offset)
        throw UserError("a copy to the GPU beyond its buffer");
    Error error{};
    if (api_->copy(stages_, static_cast<std::byte*>(device.get()) + offset, host.data(), host.size(), 1, error.data(),
                   error.size()) != 0)
        throw EnvironmentError(fmt::format("copy to the GPU: {}", error.data()));
}

void GpuStages::copy_to_host(std::span<std::byte> host, const GpuBuffer& device) const {
    if (host.size() > device.bytes()) throw UserError("a copy from the GPU larger than its buffer");
    Error error{};
    if (api_->copy(stages_, host.data(), device.get(), host.size(), 0, error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("copy from the GPU: {}", error.data()));
}

std::vector<GpuDecodedImage> GpuStages::decode_jpeg(std::span<const std::span<const std::uint8_t>> files) const {
    std::vector<const unsigned char*> data;
    std::vector<std::size_t> sizes;
    for (const auto& file : files) {
        data.push_back(file.data());
        sizes.push_back(file.size());
    }
    std::vector<InferbenchGpuImageInfo> infos(files.size());
    Error error{};
    if (api_->decode_jpeg(stages_, data.data(), sizes.data(), static_cast<int>(files.size()), infos.data(),
                          error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("GPU JPEG decode: {}", error.data()));
    std::vector<GpuDecodedImage> out;
    for (const auto& info : infos) {
        GpuDecodedImage image;
        image.components = info.components;
        if (info.status == 0) {
            image.size = {info.width, info.height};
        } else {
            image.error = info.reason;
            image.kind = gpu_decode_error_kind(info.status, {info.width, info.height});
        }
        out.push_back(std::move(image));
    }
    return out;
}

std::vector<std::uint8_t> GpuStages::decoded_pixels(int image, ImageSize size) const {
    std::vector<std::uint8_t> pixels(static_cast<std::size_t>(size.width * size.height * 3));
    Error error{};
    if (api_->decoded_pixels(stages_, image, pixels.data(), pixels.size(), error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("GPU decoded image {}: {}", image, error.data()));
    return pixels;
}

ImageErrorKind gpu_decode_error_kind(int status, ImageSize size) {
    switch (status) {
        case -1:
            return size.width <= 0 || size.height <= 0 ? ImageErrorKind::empty : ImageErrorKind::too_large;
        case 4:  // NVJPEG_STATUS_JPEG_NOT_SUPPORTED
        case 9:  // NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED
            return ImageErrorKind::unsupported;
        default:
            return ImageErrorKind::corrupt;  // BAD_JPEG, INCOMPLETE_BITSTREAM, ...
    }
}

PreprocessedBatch gpu_preprocess_batch(const GpuStages& gpu, std::span<const EncodedImage* const> images,
                                       const PipelineSteps& steps, const GpuBuffer& batch) {
    const std::size_t slot_bytes = image_slot_bytes(steps);
    if (images.size() * slot_bytes > batch.bytes())
        throw std::invalid_argument(fmt::format("a GPU batch of {} bytes cannot hold {} images of {} bytes",
                                                batch.bytes(), images.size(), slot_bytes));
    PreprocessedBatch result;
    result.decode = {.stage = PipelineStage::decode, .place = StagePlace::gpu};
    result.resize = {.stage = PipelineStage::resize, .place = StagePlace::gpu};
    result.normalize = {.stage = PipelineStage::normalize, .place = StagePlace::gpu};
    std::vector<std::span<const std::uint8_t>> files;
    for (const EncodedImage* image : images) files.emplace_back(image->bytes);
    const StageTimer decode_timer;
    const std::vector<GpuDecodedImage> decoded = gpu.decode_jpeg(files);
    std::vector<GpuPreprocessJob> jobs;
    for (std::size_t i = 0; i < decoded.size(); ++i) {
        if (decoded[i].error.empty())
            jobs.push_back({static_cast<int>(i), decoded[i].size, static_cast<std::int64_t>(i)});
        else
            result.failures.push_back(
                {i, decoded[i].kind, fmt::format("{}: GPU decode: {}", images[i]->name, decoded[i].error)});
    }
    add_span(result.decode, decode_timer.stop(), static_cast<std::int64_t>(jobs.size()));
    if (!result.failures.empty()) {
        std::vector<std::byte> black(slot_bytes);
        fill_slot_black(steps, black, 0);
        for (const ImageFailure& f : result.failures) gpu.copy_to_device(batch, black, f.slot * slot_bytes);
    }
    if (jobs.empty()) return result;
    const StageTimer resize_timer;
    gpu.preprocess(steps, jobs, batch);
    add_span(result.resize, resize_timer.stop(), static_cast<std::int64_t>(jobs.size()));
    return result;
}

std::optional<std::string> gpu_postprocess_problem(const PipelineSteps& steps, const DetectionHead& head) {
    const auto cpu_only = [&](std::string_view what) {
        return fmt::format(
            "{} runs on the CPU only: the GPU post-processing decodes SSD boxes and runs their NMS; set "
            "pipeline.postprocess: cpu",
            what);
    };
    if (steps.post != PostProcess::ssd_boxes) return cpu_only(fmt::format("post-processing {}", to_string(steps.post)));
    if (head.coding != BoxCoding::ssd_tf_anchors && head.coding != BoxCoding::ssd_r34_dboxes)
        return cpu_only(fmt::format("box decoding {}", to_string(head.coding)));
    if (head.candidates_per_class > 0)
        return cpu_only(fmt::format("the cap of {} candidates per class before NMS", head.candidates_per_class));
    return std::nullopt;
}

GpuImagePlan gpu_image_plan(const PipelineSteps& steps, ImageSize size) {
    GpuImagePlan p;
    p.geometry = resize_geometry(size, steps);
    p.x = resize_weights(size.width, p.geometry.scaled.width, p.geometry.crop_x, p.geometry.kept.width);
    p.y = resize_weights(size.height, p.geometry.scaled.height, p.geometry.crop_y, p.geometry.kept.height);
    p.first_row = p.y.start.front();
    p.row_count = p.y.start.back() + p.y.taps.back() - p.first_row;
    return p;
}

std::vector<std::byte> normalization_table(const PipelineSteps& steps) {
    // A 256 x 1 image whose pixel v is (v, v, v), normalised as NHWC: element (v, o) is output channel o's value.
    PipelineSteps row = steps;
    row.input_size = {256, 1};
    row.layout = TensorLayout::nhwc;
    RgbImage ramp;
    ramp.reshape(row.input_size);
    for (std::size_t v = 0; v < 256; ++v)
        for (std::size_t c = 0; c < 3; ++c) ramp.pixels[v * 3 + c] = static_cast<std::uint8_t>(v);
    const std::size_t element = image_slot_bytes(row) / (256 * 3);
    std::vector<std::byte> nhwc(image_slot_bytes(row));
    normalize_into(ramp, row, nhwc, 0);
    std::vector<std::byte> table(nhwc.size());
    for (std::size_t v = 0; v < 256; ++v)
        for (std::size_t o = 0; o < 3; ++o)
            std::copy_n(nhwc.begin() + static_cast<std::ptrdiff_t>((v * 3 + o) * element), element,
                        table.begin() + static_cast<std::ptrdiff_t>((o * 256 + v) * element));
    return table;
}

void GpuStages::preprocess(const PipelineSteps& steps, std::span<const GpuPreprocessJob> jobs,
                           const GpuBuffer& batch) const {
    const std::size_t slot_bytes = image_slot_bytes(steps);
    std::vector<GpuImagePlan> image_plans;
    std::vector<InferbenchGpuImagePlan> plans;
    image_plans.reserve(jobs.size());
    for (const auto& job : jobs) {
        if (job.slot < 0 || (static_cast<std::size_t>(job.slot) + 1) * slot_bytes > batch.bytes())
            throw UserError(fmt::format("slot {} is outside the GPU batch of {} bytes", job.slot, batch.bytes()));
        image_plans.push_back(gpu_image_plan(steps, job.size));
        const GpuImagePlan& p = image_plans.back();
        InferbenchGpuImagePlan plan{};
        plan.image = job.image;
        plan.slot = static_cast<int>(job.slot);
        plan.first_row = static_cast<int>(p.first_row);
        plan.row_count = static_cast<int>(p.row_count);
        plan.x = gpu_axis(p.geometry.pad_x, p.x);
        plan.y = gpu_axis(p.geometry.pad_y, p.y);
        plans.push_back(plan);
    }
    const std::vector<std::byte> table = normalization_table(steps);
    InferbenchGpuTensorFormat format{};
    format.width = static_cast<int>(steps.input_size.width);
    format.height = static_cast<int>(steps.input_size.height);
    format.nchw = steps.layout == TensorLayout::nchw ? 1 : 0;
    format.bgr = steps.bgr ? 1 : 0;
    format.element_bytes = static_cast<int>(table.size() / (3 * 256));
    format.fill = static_cast<int>(std::clamp(std::lround(steps.letterbox_fill), 0L, 255L));  // as resize_image
    format.table = table.data();
    Error error{};
    if (api_->preprocess(stages_, &format, plans.data(), static_cast<int>(plans.size()), batch.get(), error.data(),
                         error.size()) != 0)
        throw EnvironmentError(fmt::format("GPU resize and normalise: {}", error.data()));
}

std::vector<int> GpuStages::nms(const GpuBuffer& boxes, const GpuBuffer& scores, const GpuBuffer& labels, int count,
                                float iou_threshold, int max_detections) const {
    const InferbenchGpuNmsSettings settings{iou_threshold, max_detections};
    std::vector<int> kept(static_cast<std::size_t>(std::max(max_detections, 0)));
    int kept_count = 0;
    Error error{};
    if (api_->nms(stages_, static_cast<const float*>(boxes.get()), static_cast<const float*>(scores.get()),
                  static_cast<const std::int32_t*>(labels.get()), count, &settings, kept.data(), &kept_count,
                  error.data(), error.size()) != 0)
        throw EnvironmentError(fmt::format("GPU NMS: {}", error.data()));
    kept.resize(static_cast<std::size_t>(kept_count));
    return kept;
}

std::vector<std::vector<Detection>> GpuStages::ssd_detect(BoxCoding coding, std::span<const Prior> priors,
                                                          std::int64_t classes, ImageSize input, float score_threshold,
                                                          float iou_threshold, int max_detections,
                                                          const GpuBuffer& locs, const GpuBuffer& scores,
                                                          int batch) const {
    if (coding != BoxCoding::ssd_tf_anchors && coding != BoxCoding::ssd_r34_dboxes)
        throw UserError(
            fmt::format("the GPU decodes SSD boxes only; {} boxes are decoded on the CPU", to_string(coding)));
    InferbenchGpuSsdDecode decode{};
    decode.coding = coding == BoxCoding::ssd_tf_anchors ? INFERBENCH_GPU_SSD_TF : INFERBENCH_GPU_SSD_R34;
    decode.anchors = static_cast<int>(priors.size());
    decode.classes = static_cast<int>(classes);
    decode.input_width = static_cast<int>(input.width);
    decode.input_height = static_cast<int>(input.height);
    decode.score_threshold = score_threshold;
    decode.priors = reinterpret_cast<const float*>(priors.data());
    const std::size_t floats = static_cast<std::size_t>(batch) * priors.size() * sizeof(float);
    if (locs.bytes() < floats * 4 || scores.bytes() < floats * static_cast<std::size_t>(classes))
        throw UserError("the SSD outputs on the GPU are smaller than batch x anchors x (4, classes) floats");
    const InferbenchGpuNmsSettings settings{iou_threshold, max_detections};
    std::vector<InferbenchGpuDetection> flat(static_cast<std::size_t>(batch) *
                                             static_cast<std::size_t>(max_detections));
    std::vector<int> counts(static_cast<std::size_t>(batch));
    Error error{};
    if (api_->ssd_detect(stages_, &decode, &settings, static_cast<const float*>(locs.get()),
                         static_cast<const float*>(scores.get()), batch, flat.data(), counts.data(), error.data(),
                         error.size()) != 0)
        throw EnvironmentError(fmt::format("GPU SSD decoding: {}", error.data()));
    std::vector<std::vector<Detection>> out(static_cast<std::size_t>(batch));
    for (std::size_t b = 0; b < out.size(); ++b) {
        for (int i = 0; i < counts[b]; ++i) {
            const InferbenchGpuDetection& d =
                flat[b * static_cast<std::size_t>(max_detections) + static_cast<std::size_t>(i)];
            out[b].push_back({{d.box[0], d.box[1], d.box[2], d.box[3]}, d.score, d.label});
        }
    }
    return out;
}

}  // namespace inferbench::pipeline
