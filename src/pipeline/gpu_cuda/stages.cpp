#include "pipeline/gpu_cuda/stages.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/pipeline.hpp"
#include "pipeline/gpu_cuda/kernels.hpp"
#include "pipeline/image_codec.hpp"

namespace inferbench::pipeline_cuda {
namespace {

std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

void check_launch(const char* what) { check(cudaGetLastError(), what); }

std::string reason(const char* what, int status) { return std::string(what) + ": " + nvjpeg_status_name(status); }

void set_reason(InferbenchGpuImageInfo& info, int status, const std::string& why) {
    info.status = status;
    const std::size_t n = std::min(why.size(), sizeof info.reason - 1);
    why.copy(info.reason, n);
    info.reason[n] = '\0';
}

// An axis's taps checked against the source extent it may read and the model input it writes (a bad plan must not
// read or write past memory on the GPU).
void check_axis(const InferbenchGpuAxis& axis, int source_begin, int source_end, int output_extent, const char* name) {
    if (axis.placed_count < 0 || axis.placed_begin < 0 || axis.placed_begin + axis.placed_count > output_extent ||
        axis.max_taps < 0 || (axis.placed_count > 0 && (!axis.start || !axis.taps || !axis.weights)))
        throw std::runtime_error(std::string("the plan's ") + name + " axis is outside the model input or incomplete");
    for (int i = 0; i < axis.placed_count; ++i) {
        if (axis.taps[i] < 0 || axis.taps[i] > axis.max_taps || axis.start[i] < source_begin ||
            axis.start[i] + axis.taps[i] > source_end)
            throw std::runtime_error(std::string("the plan's ") + name + " output " + std::to_string(i) +
                                     " reads outside the image");
    }
}

// The host arrays of one axis, appended to the upload; their offsets (in int32 elements) returned.
struct AxisOffsets {
    std::size_t start = 0;
    std::size_t taps = 0;
    std::size_t weights = 0;
};

AxisOffsets append_axis(const InferbenchGpuAxis& axis, std::vector<std::int32_t>& ints) {
    const auto n = static_cast<std::size_t>(axis.placed_count);
    AxisOffsets at;
    at.start = ints.size();
    ints.insert(ints.end(), axis.start, axis.start + n);
    at.taps = ints.size();
    ints.insert(ints.end(), axis.taps, axis.taps + n);
    at.weights = ints.size();
    ints.insert(ints.end(), axis.weights, axis.weights + n * static_cast<std::size_t>(axis.max_taps));
    return at;
}

pipeline::ResampleAxis device_axis(const InferbenchGpuAxis& axis, const std::int32_t* ints, const AxisOffsets& at) {
    pipeline::ResampleAxis out;
    out.placed_begin = axis.placed_begin;
    out.placed_count = axis.placed_count;
    out.max_taps = axis.max_taps;
    out.start = ints + at.start;
    out.taps = ints + at.taps;
    out.weights = ints + at.weights;
    return out;
}

}  // namespace

GpuStages::GpuStages(int device, const std::string& nvjpeg_library) : device_(device) {
    int count = 0;
    check(cudaGetDeviceCount(&count), "no usable NVIDIA GPU or driver (cudaGetDeviceCount)");
    if (device < 0 || device >= count)
        throw std::runtime_error("no CUDA device " + std::to_string(device) + " (" + std::to_string(count) + " found)");
    activate();
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, device), "cudaGetDeviceProperties");
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    nvjpeg_ = NvjpegLibrary::open(nvjpeg_library);
    check_nvjpeg(nvjpeg_->api().CreateSimple(&handle_), "nvjpegCreateSimple");
    check_nvjpeg(nvjpeg_->api().JpegStateCreate(handle_, &batched_state_), "nvjpegJpegStateCreate");
    check_nvjpeg(nvjpeg_->api().JpegStateCreate(handle_, &single_state_), "nvjpegJpegStateCreate");
    description_ = std::string(props.name) + " (compute " + std::to_string(props.major) + "." +
                   std::to_string(props.minor) + "), nvJPEG " + nvjpeg_->version() + " from " + nvjpeg_->path();
}

GpuStages::~GpuStages() {
    if (nvjpeg_) {
        if (single_state_) nvjpeg_->api().JpegStateDestroy(single_state_);
        if (batched_state_) nvjpeg_->api().JpegStateDestroy(batched_state_);
        if (handle_) nvjpeg_->api().Destroy(handle_);
    }
    if (stream_) cudaStreamDestroy(stream_);
}

void GpuStages::activate() const { check(cudaSetDevice(device_), "cudaSetDevice"); }

void GpuStages::synchronize(const char* what) const { check(cudaStreamSynchronize(stream_), what); }

void GpuStages::decode(const unsigned char* const* data, const size_t* sizes, int count,
                       InferbenchGpuImageInfo* infos) {
    activate();
    images_.assign(static_cast<std::size_t>(count), {});
    std::vector<int> valid;
    std::size_t total = 0;
    for (int i = 0; i < count; ++i) {
        InferbenchGpuImageInfo& info = infos[i];
        info = InferbenchGpuImageInfo{};
        int widths[4] = {0, 0, 0, 0};
        int heights[4] = {0, 0, 0, 0};
        int subsampling = 0;
        const int status =
            nvjpeg_->api().GetImageInfo(handle_, data[i], sizes[i], &info.components, &subsampling, widths, heights);
        if (status != kNvjpegSuccess) {
            set_reason(info, status, reason("nvjpegGetImageInfo", status));
            continue;
        }
        info.width = widths[0];
        info.height = heights[0];
        // The CPU decoder's limits (pipeline/image_codec), checked before any memory is taken for the pixels.
        if (info.width <= 0 || info.height <= 0 || info.width > kMaxImageSide || info.height > kMaxImageSide) {
            set_reason(info, -1,
                       std::to_string(info.width) + "x" + std::to_string(info.height) + " is outside 1.." +
                           std::to_string(kMaxImageSide) + " pixels a side");
            continue;
        }
        if (static_cast<std::int64_t>(info.width) * info.height > pipeline::kMaxImagePixels) {
            set_reason(info, -1,
                       std::to_string(info.width) + "x" + std::to_string(info.height) + " is more than " +
                           std::to_string(pipeline::kMaxImagePixels) + " pixels");
            continue;
        }
        images_[static_cast<std::size_t>(i)] = {total, info.width, info.height, true};
        total += align_up(static_cast<std::size_t>(info.width) * static_cast<std::size_t>(info.height) * 3);
        valid.push_back(i);
    }
    if (valid.empty()) return;
    auto* arena = static_cast<unsigned char*>(decoded_.reserve(total, "cudaMalloc (decoded images)"));
    std::vector<const unsigned char*> batch_data;
    std::vector<std::size_t> batch_sizes;
    std::vector<NvjpegImage> outputs;
    for (const int i : valid) {
        const DecodedImage& image = images_[static_cast<std::size_t>(i)];
        NvjpegImage out{};
        out.channel[0] = arena + image.offset;
        out.pitch[0] = static_cast<std::size_t>(image.width) * 3;
        outputs.push_back(out);
        batch_data.push_back(data[i]);
        batch_sizes.push_back(sizes[i]);
    }
    const int n = static_cast<int>(valid.size());
    if (batched_size_ != n) {
        check_nvjpeg(nvjpeg_->api().DecodeBatchedInitialize(handle_, batched_state_, n, 1, kNvjpegOutputRgbInterleaved),
                     "nvjpegDecodeBatchedInitialize");
        batched_size_ = n;
    }
    const int status = nvjpeg_->api().DecodeBatched(handle_, batched_state_, batch_data.data(), batch_sizes.data(),
                                                    outputs.data(), stream_);
    if (status == kNvjpegSuccess) {
        synchronize("cudaStreamSynchronize (nvjpegDecodeBatched)");
        return;
    }
    // One file the batch cannot take fails the batch: decode each alone to find it.
    batched_size_ = 0;
    decode_one_by_one(data, sizes, valid, infos);
}

void GpuStages::decode_one_by_one(const unsigned char* const* data, const size_t* sizes, const std::vector<int>& valid,
                                  InferbenchGpuImageInfo* infos) {
    auto* arena = static_cast<unsigned char*>(decoded_.data());
    for (const int i : valid) {
        DecodedImage& image = images_[static_cast<std::size_t>(i)];
        NvjpegImage out{};
        out.channel[0] = arena + image.offset;
        out.pitch[0] = static_cast<std::size_t>(image.width) * 3;
        const int status = nvjpeg_->api().Decode(handle_, single_state_, data[i], sizes[i], kNvjpegOutputRgbInterleaved,
                                                 &out, stream_);
        synchronize("cudaStreamSynchronize (nvjpegDecode)");
        if (status != kNvjpegSuccess) {
            image.valid = false;
            set_reason(infos[i], status, reason("nvjpegDecode", status));
        }
    }
}

void GpuStages::decoded_pixels(int image, unsigned char* host, size_t bytes) const {
    activate();
    if (image < 0 || image >= static_cast<int>(images_.size()) || !images_[static_cast<std::size_t>(image)].valid)
        throw std::runtime_error("image " + std::to_string(image) + " was not decoded by the last decode");
    const DecodedImage& d = images_[static_cast<std::size_t>(image)];
    const std::size_t needed = static_cast<std::size_t>(d.width) * static_cast<std::size_t>(d.height) * 3;
    if (bytes < needed) throw std::runtime_error("the host buffer is smaller than the image's pixels");
    const auto* arena = static_cast<const unsigned char*>(decoded_.data());
    check(cudaMemcpy(host, arena + d.offset, needed, cudaMemcpyDeviceToHost), "cudaMemcpy (decoded pixels)");
}

void GpuStages::preprocess(const InferbenchGpuTensorFormat& format, const InferbenchGpuImagePlan* plans, int count,
                           void* batch) {
    activate();
    if (count <= 0) return;
    if (format.width <= 0 || format.height <= 0) throw std::runtime_error("the model input's size is empty");
    if (format.element_bytes != 1 && format.element_bytes != 2 && format.element_bytes != 4)
        throw std::runtime_error("elements of " + std::to_string(format.element_bytes) + " bytes: 1, 2 or 4 expected");
    if (!format.table) throw std::runtime_error("no normalisation table");
    std::vector<pipeline::ResampleJob> jobs(static_cast<std::size_t>(count));
    std::vector<std::int32_t> ints;
    std::vector<AxisOffsets> offsets;
    std::vector<std::size_t> rows_at;
    std::size_t rows_total = 0;
    long long max_elements = 0;
    const auto* arena = static_cast<const std::uint8_t*>(decoded_.data());
    for (int i = 0; i < count; ++i) {
        const InferbenchGpuImagePlan& p = plans[i];
        if (p.image < 0 || p.image >= static_cast<int>(images_.size()) ||
            !images_[static_cast<std::size_t>(p.image)].valid)
            throw std::runtime_error("plan " + std::to_string(i) + " names image " + std::to_string(p.image) +
                                     ", which the last decode did not produce");
        const DecodedImage& image = images_[static_cast<std::size_t>(p.image)];
        if (p.slot < 0 || p.first_row < 0 || p.row_count < 0 || p.first_row + p.row_count > image.height)
            throw std::runtime_error("plan " + std::to_string(i) + " reads rows outside its image or has no slot");
        check_axis(p.x, 0, image.width, format.width, "x");
        check_axis(p.y, p.first_row, p.first_row + p.row_count, format.height, "y");
        pipeline::ResampleJob& job = jobs[static_cast<std::size_t>(i)];
        job.source = arena + image.offset;
        job.source_width = image.width;
        job.slot = p.slot;
        job.first_row = p.first_row;
        job.row_count = p.row_count;
        offsets.push_back(append_axis(p.x, ints));
        offsets.push_back(append_axis(p.y, ints));
        rows_at.push_back(rows_total);
        const auto row_bytes = static_cast<std::size_t>(p.row_count) * static_cast<std::size_t>(p.x.placed_count) * 3;
        rows_total += align_up(row_bytes);
        max_elements = std::max(max_elements, static_cast<long long>(row_bytes));
    }
    const std::size_t jobs_bytes = align_up(jobs.size() * sizeof(pipeline::ResampleJob));
    const std::size_t table_bytes = align_up(3 * 256 * static_cast<std::size_t>(format.element_bytes));
    const std::size_t ints_bytes = ints.size() * sizeof(std::int32_t);
    auto* device = static_cast<unsigned char*>(
        plan_buffer_.reserve(jobs_bytes + table_bytes + ints_bytes, "cudaMalloc (resize plans)"));
    auto* rows = static_cast<std::uint8_t*>(rows_.reserve(rows_total, "cudaMalloc (resize rows)"));
    const auto* device_table = device + jobs_bytes;
    const auto* device_ints = reinterpret_cast<const std::int32_t*>(device + jobs_bytes + table_bytes);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        jobs[i].x = device_axis(plans[i].x, device_ints, offsets[i * 2]);
        jobs[i].y = device_axis(plans[i].y, device_ints, offsets[i * 2 + 1]);
        jobs[i].rows = rows + rows_at[i];
    }
    check(cudaMemcpyAsync(device, jobs.data(), jobs.size() * sizeof(pipeline::ResampleJob), cudaMemcpyHostToDevice,
                          stream_),
          "cudaMemcpyAsync (resize jobs)");
    check(cudaMemcpyAsync(device + jobs_bytes, format.table, 3 * 256 * static_cast<std::size_t>(format.element_bytes),
                          cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (normalisation table)");
    check(cudaMemcpyAsync(device + jobs_bytes + table_bytes, ints.data(), ints_bytes, cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (resize weights)");
    const auto* device_jobs = reinterpret_cast<const pipeline::ResampleJob*>(device);
    if (max_elements > 0) {
        launch_horizontal_pass(device_jobs, count, max_elements, stream_);
        check_launch("horizontal resize pass");
    }
    pipeline::ResampleOutput output;
    output.width = format.width;
    output.height = format.height;
    output.nchw = format.nchw != 0;
    output.bgr = format.bgr != 0;
    output.element_bytes = format.element_bytes;
    output.fill = static_cast<std::uint8_t>(std::clamp(format.fill, 0, 255));
    output.table = device_table;
    launch_output_pass(device_jobs, count, output, batch, stream_);
    check_launch("vertical resize pass and normalisation");
    // The host vectors above are read by the asynchronous copies: wait before they go.
    synchronize("cudaStreamSynchronize (preprocess)");
}

int GpuStages::nms(const float* boxes, const float* scores, const std::int32_t* labels, const std::uint32_t* ids,
                   int count, const InferbenchGpuNmsSettings& settings) {
    activate();
    if (settings.max_detections <= 0) throw std::runtime_error("max_detections must be at least 1");
    if (count <= 0) return 0;
    if (count > kMaxNmsCandidates)
        throw std::runtime_error(std::to_string(count) + " NMS candidates, more than the " +
                                 std::to_string(kMaxNmsCandidates) + " the GPU NMS takes; raise the score threshold");
    const auto n = static_cast<std::size_t>(count);
    const std::size_t words = (n + 63) / 64;
    auto* keys = nms_keys_.reserve_as<std::uint64_t>(n, "cudaMalloc (NMS keys)");
    auto* sorted = nms_sorted_keys_.reserve_as<std::uint64_t>(n, "cudaMalloc (NMS keys)");
    auto* positions = nms_positions_.reserve_as<std::int32_t>(n, "cudaMalloc (NMS positions)");
    auto* order = nms_order_.reserve_as<std::int32_t>(n, "cudaMalloc (NMS order)");
    auto* mask = nms_mask_.reserve_as<std::uint64_t>(n * words, "cudaMalloc (NMS mask)");
    auto* kept =
        nms_kept_.reserve_as<std::int32_t>(static_cast<std::size_t>(settings.max_detections), "cudaMalloc (NMS kept)");
    auto* kept_count = nms_kept_count_.reserve_as<std::int32_t>(1, "cudaMalloc (NMS kept count)");
    std::size_t temp_bytes = 0;
    check(nms_sort_temp_bytes(count, &temp_bytes), "cub::DeviceRadixSort (temporary size)");
    void* temp = nms_temp_.reserve(temp_bytes, "cudaMalloc (NMS sort)");
    launch_nms_keys(scores, ids, count, keys, positions, stream_);
    check_launch("NMS keys");
    check(sort_pairs_descending(temp, temp_bytes, keys, sorted, positions, order, count, stream_),
          "cub::DeviceRadixSort::SortPairsDescending");
    // torchvision's batched_nms moves few boxes apart by class; many it suppresses class by class.
    const float* unit = nullptr;
    if (count <= pipeline::kOffsetTrickMaxCandidates) {
        auto* device_unit = nms_offset_unit_.reserve_as<float>(1, "cudaMalloc (NMS offset)");
        launch_offset_unit(boxes, count, device_unit, stream_);
        check_launch("NMS class offset");
        unit = device_unit;
    }
    launch_nms_mask(boxes, labels, order, count, unit, settings.iou_threshold, mask, stream_);
    check_launch("NMS mask");
    launch_nms_scan(mask, order, count, settings.max_detections, kept, kept_count, stream_);
    check_launch("NMS scan");
    std::int32_t host_count = 0;
    check(cudaMemcpyAsync(&host_count, kept_count, sizeof host_count, cudaMemcpyDeviceToHost, stream_),
          "cudaMemcpyAsync (NMS kept count)");
    synchronize("cudaStreamSynchronize (NMS)");
    return host_count;
}

void GpuStages::kept_positions(int* host, int count) const {
    activate();
    if (count <= 0) return;
    check(cudaMemcpy(host, nms_kept_.data(), static_cast<std::size_t>(count) * sizeof(std::int32_t),
                     cudaMemcpyDeviceToHost),
          "cudaMemcpy (NMS kept)");
}

void GpuStages::ssd_detect(const InferbenchGpuSsdDecode& decode, const InferbenchGpuNmsSettings& nms_settings,
                           const float* locs, const float* scores, int batch, InferbenchGpuDetection* out,
                           int* counts) {
    activate();
    if (decode.coding != INFERBENCH_GPU_SSD_TF && decode.coding != INFERBENCH_GPU_SSD_R34)
        throw std::runtime_error("unknown SSD coding " + std::to_string(decode.coding));
    if (decode.anchors <= 0 || decode.classes <= 1 || !decode.priors || decode.input_width <= 0 ||
        decode.input_height <= 0)
        throw std::runtime_error(
            "SSD decoding needs anchors, classes (the background and more), priors and the input size");
    const auto anchors = static_cast<std::size_t>(decode.anchors);
    auto* priors = ssd_priors_.reserve_as<float>(anchors * 4, "cudaMalloc (SSD priors)");
    check(cudaMemcpyAsync(priors, decode.priors, anchors * 4 * sizeof(float), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (SSD priors)");
    // Candidates: boxes (4 floats), scores, labels, ids, one after another in one buffer.
    const auto capacity = static_cast<std::size_t>(kMaxNmsCandidates);
    auto* candidates = static_cast<unsigned char*>(ssd_candidates_.reserve(
        capacity * (4 * sizeof(float) + sizeof(float) + 2 * sizeof(std::int32_t)), "cudaMalloc (SSD candidates)"));
    auto* boxes = reinterpret_cast<float*>(candidates);
    auto* candidate_scores = boxes + capacity * 4;
    auto* labels = reinterpret_cast<std::int32_t*>(candidate_scores + capacity);
    auto* ids = reinterpret_cast<std::uint32_t*>(labels + capacity);
    auto* count = ssd_count_.reserve_as<std::int32_t>(1, "cudaMalloc (SSD candidate count)");
    const auto max_det = static_cast<std::size_t>(nms_settings.max_detections);
    void* detections = detections_.reserve(max_det * sizeof(InferbenchGpuDetection), "cudaMalloc (detections)");
    DeviceSsdDecode d;
    d.coding = decode.coding;
    d.anchors = decode.anchors;
    d.classes = decode.classes;
    d.width = static_cast<float>(decode.input_width);
    d.height = static_cast<float>(decode.input_height);
    d.score_threshold = decode.score_threshold;
    for (int b = 0; b < batch; ++b) {
        check(cudaMemsetAsync(count, 0, sizeof(std::int32_t), stream_), "cudaMemsetAsync (SSD candidate count)");
        launch_ssd_candidates(d, locs + static_cast<std::size_t>(b) * anchors * 4,
                              scores + static_cast<std::size_t>(b) * anchors * static_cast<std::size_t>(d.classes),
                              priors, boxes, candidate_scores, labels, ids, count, kMaxNmsCandidates, stream_);
        check_launch("SSD candidates");
        std::int32_t found = 0;
        check(cudaMemcpyAsync(&found, count, sizeof found, cudaMemcpyDeviceToHost, stream_),
              "cudaMemcpyAsync (SSD candidate count)");
        synchronize("cudaStreamSynchronize (SSD candidates)");
        if (found > kMaxNmsCandidates)
            throw std::runtime_error("image " + std::to_string(b) + " has " + std::to_string(found) +
                                     " boxes above the score threshold, more than the " +
                                     std::to_string(kMaxNmsCandidates) + " the GPU NMS takes; raise score_threshold");
        const int kept = nms(boxes, candidate_scores, labels, ids, found, nms_settings);
        counts[b] = kept;
        if (kept == 0) continue;
        launch_gather_detections(
            boxes, candidate_scores, labels, ids, static_cast<const std::int32_t*>(nms_kept_.data()),
            static_cast<const std::int32_t*>(nms_kept_count_.data()), nms_settings.max_detections, detections, stream_);
        check_launch("gather detections");
        check(cudaMemcpyAsync(out + static_cast<std::size_t>(b) * max_det, detections,
                              static_cast<std::size_t>(kept) * sizeof(InferbenchGpuDetection), cudaMemcpyDeviceToHost,
                              stream_),
              "cudaMemcpyAsync (detections)");
        synchronize("cudaStreamSynchronize (detections)");
    }
}

}  // namespace inferbench::pipeline_cuda
