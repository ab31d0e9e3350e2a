// An image pipeline cell's vocabulary: where its images come from, the steps that make a model's input from an
// image and its output into results (decode, resize, normalise, infer, box decoding, NMS), where each stage runs,
// sequential or overlapped, and one stage's measured time per batch. Every BenchmarkSpec carries a
// PipelineSettings, inactive for every other cell.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace inferbench {

// Where a stage runs: the host's cores, or the cell's GPU.
enum class StagePlace { cpu, gpu };
// Stages one after another per batch (each batch's latency), or pipelined: batch n+1 pre-processed while batch n
// infers and batch n-1 is post-processed (a deployment's throughput).
enum class PipelineMode { sequential, overlapped };
// The encoding of the images inferbench writes itself.
enum class ImageFormat { jpeg, png };
// How an image becomes the model's input size: the shorter side scaled then the centre cropped (ImageNet
// classifiers: 256 then 224), the whole image scaled to fit with the aspect kept and the rest filled (YOLO), or
// scaled to the input size, aspect not kept (SSD).
enum class ResizeRule { shorter_side_crop, letterbox, plain };
enum class TensorLayout { nchw, nhwc };
// The element type of the model's image input.
enum class PixelType { f32, f16, u8 };
// What a model's outputs become: class probabilities and the top k; SSD's box decoding against its priors and
// NMS; YOLO's grid decoding and NMS; per-pixel argmax (segmentation); nothing.
enum class PostProcess { none, softmax_topk, ssd_boxes, yolo_boxes, argmax };

struct ImageSize {
    std::int64_t width = 0;
    std::int64_t height = 0;
    friend bool operator==(const ImageSize&, const ImageSize&) = default;
};

// How a model's input is made from an image and what its outputs become. A zoo model's come from its published
// pre- and post-processing (pipeline/model_pipelines); a user's model names them in the plan (pipeline.steps).
struct PipelineSteps {
    ResizeRule resize = ResizeRule::plain;
    ImageSize input_size{224, 224};  // the model's image input, width x height
    std::int64_t resize_shorter = 0;  // shorter_side_crop: the shorter side before the crop (256 for a 224 crop)
    float letterbox_fill = 114.0F;    // letterbox: the padding's value, on 0..255
    // Per RGB channel on 0..255 values: (pixel - mean) / std. ImageNet's is mean 123.675 116.28 103.53, std 58.395
    // 57.12 57.375; YOLO's 0 and 255.
    std::array<float, 3> mean{0.0F, 0.0F, 0.0F};
    std::array<float, 3> std{1.0F, 1.0F, 1.0F};
    bool bgr = false;  // channels in BGR order
    TensorLayout layout = TensorLayout::nchw;
    PixelType pixel_type = PixelType::f32;
    PostProcess post = PostProcess::none;
    std::int64_t top_k = 5;             // softmax_topk
    float score_threshold = 0.0F;       // boxes: a box below it is dropped before NMS
    float iou_threshold = 0.5F;         // NMS: a box overlapping a kept one of its class by more is suppressed
    std::int64_t max_detections = 100;  // per image, after NMS
    friend bool operator==(const PipelineSteps&, const PipelineSteps&) = default;
};

// A pipeline cell's settings (the plan's `pipeline:`); images empty: the cell is not a pipeline cell.
struct PipelineSettings {
    std::string images;              // "synthetic", or a folder of JPEG/PNG files (an absolute path)
    std::int64_t image_count = 64;   // synthetic: the images written; a folder: the most read (0: all)
    ImageSize image_size{640, 480};  // synthetic images' size
    ImageFormat image_format = ImageFormat::jpeg;
    std::int64_t jpeg_quality = 90;
    StagePlace preprocess = StagePlace::cpu;   // read, decode, resize, normalise
    StagePlace postprocess = StagePlace::cpu;  // box decoding, NMS, softmax, argmax
    std::int64_t threads = 2;                  // the CPU stages' worker threads
    PipelineMode mode = PipelineMode::sequential;
    std::int64_t queue_depth = 2;              // overlapped: batches between two stages at most
    std::optional<PipelineSteps> steps;        // a user's model's; a zoo model's come from its definition

    bool active() const { return !images.empty(); }
    friend bool operator==(const PipelineSettings&, const PipelineSettings&) = default;
};

inline constexpr std::string_view kSyntheticImages = "synthetic";

// The stages a pipeline's time is stored by, in the order a batch passes them.
enum class PipelineStage { read, decode, resize, normalize, infer, postprocess, nms };
inline constexpr PipelineStage kPipelineStages[] = {PipelineStage::read,   PipelineStage::decode,
                                                    PipelineStage::resize, PipelineStage::normalize,
                                                    PipelineStage::infer,  PipelineStage::postprocess,
                                                    PipelineStage::nms};

// One stage's time for one batch (stored in pipeline_stages): from the first of the batch's images entering the
// stage to the last leaving it, on core/clock's clock (the iterations' and the telemetry's); cpu_ns the CPU time
// the stage's threads spent on it (CLOCK_THREAD_CPUTIME_ID, summed over threads; kStageNotMeasured where not
// read, e.g. a GPU stage's kernels).
inline constexpr std::int64_t kStageNotMeasured = -1;
struct PipelineStageTime {
    std::int64_t iteration = 0;  // the batch's measured iteration, as the iterations table numbers it
    PipelineStage stage = PipelineStage::read;
    StagePlace place = StagePlace::cpu;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t cpu_ns = kStageNotMeasured;
    std::int64_t images = 0;  // the images of the batch that passed the stage
    friend bool operator==(const PipelineStageTime&, const PipelineStageTime&) = default;
};

// The words plans, the store and reports use; parse_* return nothing for a word that names none.
std::string_view to_string(StagePlace place);
std::string_view to_string(PipelineMode mode);
std::string_view to_string(ImageFormat format);
std::string_view to_string(ResizeRule rule);
std::string_view to_string(TensorLayout layout);
std::string_view to_string(PixelType type);
std::string_view to_string(PostProcess post);
std::string_view to_string(PipelineStage stage);
std::optional<StagePlace> parse_stage_place(std::string_view text);
std::optional<PipelineMode> parse_pipeline_mode(std::string_view text);
std::optional<ImageFormat> parse_image_format(std::string_view text);
std::optional<ResizeRule> parse_resize_rule(std::string_view text);
std::optional<TensorLayout> parse_tensor_layout(std::string_view text);
std::optional<PixelType> parse_pixel_type(std::string_view text);
std::optional<PostProcess> parse_post_process(std::string_view text);
std::optional<PipelineStage> parse_pipeline_stage(std::string_view text);
// "640x480" <-> ImageSize; nothing for malformed text or a side outside 1..kMaxImageSide.
inline constexpr std::int64_t kMaxImageSide = 16384;
std::optional<ImageSize> parse_image_size(std::string_view text);
std::string to_string(ImageSize size);

}  // namespace inferbench
