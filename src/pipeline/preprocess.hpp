// An image made into one slot of a batch tensor (normalise: (pixel - mean) / std per RGB channel, channel order,
// layout, pixel type), and a batch's decode, resize and normalise over a thread pool with each stage timed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/pipeline.hpp"
#include "pipeline/image_codec.hpp"
#include "pipeline/image_source.hpp"
#include "pipeline/resize.hpp"
#include "pipeline/thread_pool.hpp"

namespace inferbench::pipeline {

// The bytes one image takes in the batch tensor: 3 * input width * height * the pixel type's size.
std::size_t image_slot_bytes(const PipelineSteps& steps);

// Writes `image` (steps.input_size) into slot `slot` of `batch` (a tensor of whole slots, slot 0 first):
// value = (pixel - mean[c]) / std[c] on 0..255 values, c the RGB channel, written in BGR order where steps.bgr,
// NCHW or NHWC; f32 as is, f16 rounded to nearest even (clamped to +-65504), u8 rounded half up and clamped to
// 0..255. Throws std::invalid_argument when the image is not the input size or the slot is outside `batch`.
void normalize_into(const RgbImage& image, const PipelineSteps& steps, std::span<std::byte> batch, std::int64_t slot);

// Fills slot `slot` with what a zero image normalises to (a failed image's place in the batch).
void fill_slot_black(const PipelineSteps& steps, std::span<std::byte> batch, std::int64_t slot);

// The per-thread buffers of preprocess_batch, kept between batches (index: the pool's worker).
struct PreprocessScratch {
    struct Worker {
        RgbImage decoded;
        RgbImage resized;
        ResizeScratch resize;
    };
    std::vector<Worker> workers;
};

// An image of the batch that failed (its slot filled black).
struct ImageFailure {
    std::size_t slot = 0;
    ImageErrorKind kind = ImageErrorKind::corrupt;
    std::string message;
};

// One batch's decode, resize and normalize stages (iteration 0, place cpu: the caller sets its iteration) and
// the images that failed.
struct PreprocessedBatch {
    PipelineStageTime decode;
    PipelineStageTime resize;
    PipelineStageTime normalize;
    std::vector<ImageFailure> failures;
};

// Decodes, resizes and normalises images[i] into slot i of `batch` for every i, spread over the pool's threads
// (each image on one thread, its three stages timed apart; a stage's time per batch folds its threads' spans:
// stage_timer's add_span). `batch` holds at least images.size() slots. Images that fail are counted, never
// thrown (a failed image's time is in none of the stages: it passed none); std::invalid_argument for a batch too
// small or a geometry resize_geometry refuses.
PreprocessedBatch preprocess_batch(ThreadPool& pool, std::span<const EncodedImage* const> images,
                                   const PipelineSteps& steps, std::span<std::byte> batch, PreprocessScratch& scratch,
                                   const ImageLimits& limits = {});

}  // namespace inferbench::pipeline
