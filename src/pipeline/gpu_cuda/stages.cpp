#include "pipeline/gpu_cuda/stages.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/pipeline.hpp"
#include "pipeline/gpu_cuda/kernels.hpp"

namespace inferbench::pipeline_cuda {
namespace {

static_assert(sizeof(InferbenchGpuTap) == sizeof(pipeline::ResampleTap));

std::size_t align_up(std::size_t bytes) { return (bytes + 255) / 256 * 256; }

void check_launch(const char* what) { check(cudaGetLastError(), what); }

std::string reason(const char* what, int status) {
    return std::string(what) + ": " + nvjpeg_status_name(status);
}

void set_reason(InferbenchGpuImageInfo& info, int status, const std::string& why) {
    info.status = status;
    const std::size_t n = std::min(why.size(), sizeof info.reason - 1);
    why.copy(info.reason, n);
    info.reason[n] = '\0';
}

// The taps of one axis checked against the source extent and the weights (a bad plan must not read past memory).
void check_axis(const InferbenchGpuAxis& axis, int source_begin, int source_end, int output_extent, const char* name) {
    if (axis.placed_count < 0 || axis.placed_begin < 0 || axis.placed_begin + axis.placed_count > output_extent)
        throw std::runtime_error(std::string("the plan's ") + name + " placement is outside the model input");
    for (int i = 0; i < axis.placed_count; ++i) {
        const InferbenchGpuTap& t = axis.taps[i];
        if (t.count < 0 || t.first < source_begin || t.first + t.count > source_end || t.weight_offset < 0 ||
            t.weight_offset + t.count > axis.weight_count)
            throw std::runtime_error(std::string("the plan's ") + name + " tap " + std::to_string(i) +
                                     " reads outside the image or its weights");
    }
}

}  // namespace

GpuStages::GpuStages(int device, const std::string& nvjpeg_library) : device_(device) {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count)
        throw std::runtime_error("no CUDA device " + std::to_string(device) + " (" + std::to_string(count) +
                                 " found)");
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
        if (info.width <= 0 || info.height <= 0 || info.width > kMaxImageSide || info.height > kMaxImageSide) {
            set_reason(info, -1, std::to_string(info.width) + "x" + std::to_string(info.height) +
                                     " is outside 1.." + std::to_string(kMaxImageSide) + " pixels a side");
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
        check_nvjpeg(nvjpeg_->api().DecodeBatchedInitialize(handle_, batched_state_, n, 1,
                                                            kNvjpegOutputRgbInterleaved),
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
        const int status =
            nvjpeg_->api().Decode(handle_, single_state_, data[i], sizes[i], kNvjpegOutputRgbInterleaved, &out, stream_);
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
    if (format.pixel_type < INFERBENCH_GPU_PIXEL_F32 || format.pixel_type > INFERBENCH_GPU_PIXEL_U8)
        throw std::runtime_error("unknown pixel type " + std::to_string(format.pixel_type));
    std::vector<DeviceImageJob> jobs(static_cast<std::size_t>(count));
    std::vector<pipeline::ResampleTap> taps;
    std::vector<float> weights;
    std::vector<std::size_t> tap_at(static_cast<std::size_t>(count) * 2);
    std::vector<std::size_t> weight_at(static_cast<std::size_t>(count) * 2);
    std::size_t rows_total = 0;
    int max_rows = 0;
    int max_width = 0;
    const auto* arena = static_cast<const std::uint8_t*>(decoded_.data());
    for (int i = 0; i < count; ++i) {
        const InferbenchGpuImagePlan& p = plans[i];
        if (p.image < 0 || p.image >= static_cast<int>(images_.size()) ||
            !images_[static_cast<std::size_t>(p.image)].valid)
            throw std::runtime_error("plan " + std::to_string(i) + " names image " + std::to_string(p.image) +
                                     ", which the last decode did not produce");
        const DecodedImage& image = images_[static_cast<std::size_t>(p.image)];
        if (p.first_row < 0 || p.row_count < 0 || p.first_row + p.row_count > image.height)
            throw std::runtime_error("plan " + std::to_string(i) + " reads rows outside its image");
        check_axis(p.x, 0, image.width, format.width, "x");
        check_axis(p.y, p.first_row, p.first_row + p.row_count, format.height, "y");
        DeviceImageJob& job = jobs[static_cast<std::size_t>(i)];
        job.source = arena + image.offset;
        job.source_width = image.width;
        job.slot = p.slot;
        job.first_row = p.first_row;
        job.row_count = p.row_count;
        job.placed_x = p.x.placed_begin;
        job.placed_width = p.x.placed_count;
        job.placed_y = p.y.placed_begin;
        job.placed_height = p.y.placed_count;
        const InferbenchGpuAxis* axes[2] = {&p.x, &p.y};
        for (int a = 0; a < 2; ++a) {
            tap_at[static_cast<std::size_t>(i * 2 + a)] = taps.size();
            weight_at[static_cast<std::size_t>(i * 2 + a)] = weights.size();
            for (int t = 0; t < axes[a]->placed_count; ++t) {
                const InferbenchGpuTap& tap = axes[a]->taps[t];
                taps.push_back({tap.first, tap.count, tap.weight_offset});
            }
            weights.insert(weights.end(), axes[a]->weights, axes[a]->weights + axes[a]->weight_count);
        }
        rows_total += align_up(static_cast<std::size_t>(p.row_count) * static_cast<std::size_t>(p.x.placed_count) * 3);
        max_rows = std::max(max_rows, p.row_count);
        max_width = std::max(max_width, p.x.placed_count);
    }
    const std::size_t jobs_bytes = align_up(jobs.size() * sizeof(DeviceImageJob));
    const std::size_t taps_bytes = align_up(taps.size() * sizeof(pipeline::ResampleTap));
    const std::size_t weights_bytes = align_up(weights.size() * sizeof(float));
    auto* device = static_cast<unsigned char*>(
        plan_buffer_.reserve(jobs_bytes + taps_bytes + weights_bytes, "cudaMalloc (resize plans)"));
    auto* rows = static_cast<std::uint8_t*>(rows_.reserve(rows_total, "cudaMalloc (resize rows)"));
    const auto* device_taps = reinterpret_cast<const pipeline::ResampleTap*>(device + jobs_bytes);
    const auto* device_weights = reinterpret_cast<const float*>(device + jobs_bytes + taps_bytes);
    std::size_t rows_at = 0;
    for (int i = 0; i < count; ++i) {
        DeviceImageJob& job = jobs[static_cast<std::size_t>(i)];
        job.x_taps = device_taps + tap_at[static_cast<std::size_t>(i * 2)];
        job.y_taps = device_taps + tap_at[static_cast<std::size_t>(i * 2 + 1)];
        job.x_weights = device_weights + weight_at[static_cast<std::size_t>(i * 2)];
        job.y_weights = device_weights + weight_at[static_cast<std::size_t>(i * 2 + 1)];
        job.rows = rows + rows_at;
        rows_at += align_up(static_cast<std::size_t>(job.row_count) * static_cast<std::size_t>(job.placed_width) * 3);
    }
    check(cudaMemcpyAsync(device, jobs.data(), jobs.size() * sizeof(DeviceImageJob), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (resize jobs)");
    check(cudaMemcpyAsync(device + jobs_bytes, taps.data(), taps.size() * sizeof(pipeline::ResampleTap),
                          cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (resize taps)");
    check(cudaMemcpyAsync(device + jobs_bytes + taps_bytes, weights.data(), weights.size() * sizeof(float),
                          cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (resize weights)");
    const auto* device_jobs = reinterpret_cast<const DeviceImageJob*>(device);
    if (max_rows > 0 && max_width > 0) {
        launch_horizontal_pass(device_jobs, count, max_rows, max_width, stream_);
        check_launch("horizontal resize pass");
    }
    DeviceTensorFormat f;
    f.width = format.width;
    f.height = format.height;
    f.nchw = format.nchw != 0;
    f.pixel_type = format.pixel_type;
    f.bgr = format.bgr != 0;
    for (int c = 0; c < 3; ++c) {
        f.mean[c] = format.mean[c];
        f.std_dev[c] = format.std[c];
    }
    f.fill = pipeline::round_to_u8(format.fill);
    launch_vertical_normalize(device_jobs, count, f, batch, stream_);
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
    auto* kept = nms_kept_.reserve_as<std::int32_t>(static_cast<std::size_t>(settings.max_detections),
                                                    "cudaMalloc (NMS kept)");
    auto* kept_count = nms_kept_count_.reserve_as<std::int32_t>(1, "cudaMalloc (NMS kept count)");
    std::size_t temp_bytes = 0;
    check(nms_sort_temp_bytes(count, &temp_bytes), "cub::DeviceRadixSort (temporary size)");
    void* temp = nms_temp_.reserve(temp_bytes, "cudaMalloc (NMS sort)");
    launch_nms_keys(scores, ids, count, keys, positions, stream_);
    check_launch("NMS keys");
    check(sort_pairs_descending(temp, temp_bytes, keys, sorted, positions, order, count, stream_),
          "cub::DeviceRadixSort::SortPairsDescending");
    launch_nms_mask(boxes, labels, order, count, settings.iou_threshold, mask, stream_);
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
    if (decode.anchors <= 0 || decode.classes <= 0 || !decode.priors)
        throw std::runtime_error("SSD decoding needs anchors, classes and priors");
    if (decode.score_function < 0 || decode.score_function > 2)
        throw std::runtime_error("unknown score function " + std::to_string(decode.score_function));
    const auto anchors = static_cast<std::size_t>(decode.anchors);
    auto* priors = ssd_priors_.reserve_as<float>(anchors * 4, "cudaMalloc (SSD priors)");
    check(cudaMemcpyAsync(priors, decode.priors, anchors * 4 * sizeof(float), cudaMemcpyHostToDevice, stream_),
          "cudaMemcpyAsync (SSD priors)");
    // Candidates: boxes (4 floats), scores, labels, ids, one after another in one buffer.
    const auto capacity = static_cast<std::size_t>(kMaxNmsCandidates);
    auto* candidates = static_cast<unsigned char*>(
        ssd_candidates_.reserve(capacity * (4 * sizeof(float) + sizeof(float) + 2 * sizeof(std::int32_t)),
                                "cudaMalloc (SSD candidates)"));
    auto* boxes = reinterpret_cast<float*>(candidates);
    auto* candidate_scores = boxes + capacity * 4;
    auto* labels = reinterpret_cast<std::int32_t*>(candidate_scores + capacity);
    auto* ids = reinterpret_cast<std::uint32_t*>(labels + capacity);
    auto* count = ssd_count_.reserve_as<std::int32_t>(1, "cudaMalloc (SSD candidate count)");
    const auto max_det = static_cast<std::size_t>(nms_settings.max_detections);
    void* detections = detections_.reserve(max_det * sizeof(InferbenchGpuDetection), "cudaMalloc (detections)");
    DeviceSsdDecode d;
    d.anchors = decode.anchors;
    d.classes = decode.classes;
    d.locs_coords_major = decode.locs_coords_major != 0;
    d.scores_classes_major = decode.scores_classes_major != 0;
    d.yx_order = decode.yx_order != 0;
    d.center_scale = decode.center_scale;
    d.size_scale = decode.size_scale;
    d.score_function = decode.score_function;
    d.background_class = decode.background_class;
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
        launch_gather_detections(boxes, candidate_scores, labels, ids, static_cast<const std::int32_t*>(nms_kept_.data()),
                                 static_cast<const std::int32_t*>(nms_kept_count_.data()), nms_settings.max_detections,
                                 detections, stream_);
        check_launch("gather detections");
        check(cudaMemcpyAsync(out + static_cast<std::size_t>(b) * max_det, detections,
                              static_cast<std::size_t>(kept) * sizeof(InferbenchGpuDetection), cudaMemcpyDeviceToHost,
                              stream_),
              "cudaMemcpyAsync (detections)");
        synchronize("cudaStreamSynchronize (detections)");
    }
}

}  // namespace inferbench::pipeline_cuda
