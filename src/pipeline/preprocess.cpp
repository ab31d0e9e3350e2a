#include "pipeline/preprocess.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "models/onnx_fp16.hpp"
#include "pipeline/stage_timer.hpp"

namespace inferbench::pipeline {
namespace {

std::size_t pixel_bytes(PixelType type) {
    switch (type) {
        case PixelType::f32:
            return 4;
        case PixelType::f16:
            return 2;
        case PixelType::u8:
            return 1;
    }
    return 4;
}

// Every 0..255 value's normalised element per RGB channel, computed as (v - mean) / std exactly once: the slot is
// then written by lookup.
template <typename T>
using ChannelTables = std::array<std::array<T, 256>, 3>;

template <typename T>
T convert(float value) {
    if constexpr (std::is_same_v<T, float>) {
        return value;
    } else if constexpr (std::is_same_v<T, std::uint16_t>) {
        return models::onnx::to_fp16_clamped(value);
    } else {
        return static_cast<std::uint8_t>(std::clamp(std::floor(value + 0.5F), 0.0F, 255.0F));
    }
}

template <typename T>
ChannelTables<T> channel_tables(const PipelineSteps& steps) {
    ChannelTables<T> tables{};
    for (std::size_t c = 0; c < 3; ++c)
        for (std::size_t v = 0; v < 256; ++v)
            tables[c][v] = convert<T>((static_cast<float>(v) - steps.mean[c]) / steps.std[c]);
    return tables;
}

// Output channel o holds RGB channel source_channel(o).
std::size_t source_channel(const PipelineSteps& steps, std::size_t o) { return steps.bgr ? 2 - o : o; }

template <typename T>
void write_slot(const RgbImage& image, const PipelineSteps& steps, std::byte* slot) {
    const ChannelTables<T> tables = channel_tables<T>(steps);
    const auto pixels = static_cast<std::size_t>(image.width * image.height);
    const std::uint8_t* in = image.pixels.data();
    auto* out = reinterpret_cast<T*>(slot);
    if (steps.layout == TensorLayout::nhwc) {
        const std::array<std::size_t, 3> from{source_channel(steps, 0), source_channel(steps, 1),
                                              source_channel(steps, 2)};
        for (std::size_t p = 0; p < pixels; ++p)
            for (std::size_t o = 0; o < 3; ++o) out[p * 3 + o] = tables[from[o]][in[p * 3 + from[o]]];
        return;
    }
    for (std::size_t o = 0; o < 3; ++o) {
        const std::size_t c = source_channel(steps, o);
        const auto& table = tables[c];
        T* plane = out + o * pixels;
        for (std::size_t p = 0; p < pixels; ++p) plane[p] = table[in[p * 3 + c]];
    }
}

std::byte* slot_at(const PipelineSteps& steps, std::span<std::byte> batch, std::int64_t slot) {
    const std::size_t bytes = image_slot_bytes(steps);
    if (slot < 0 || (static_cast<std::size_t>(slot) + 1) * bytes > batch.size())
        throw std::invalid_argument(
            fmt::format("slot {} is outside a batch tensor of {} bytes ({} bytes a slot)", slot, batch.size(), bytes));
    // The tensor's elements are written through T*: the slot must be aligned for them.
    std::byte* at = batch.data() + static_cast<std::size_t>(slot) * bytes;
    if (reinterpret_cast<std::uintptr_t>(at) % pixel_bytes(steps.pixel_type) != 0)
        throw std::invalid_argument("the batch tensor's bytes are not aligned for its element type");
    return at;
}

void write_any(const RgbImage& image, const PipelineSteps& steps, std::byte* at) {
    switch (steps.pixel_type) {
        case PixelType::f32:
            write_slot<float>(image, steps, at);
            return;
        case PixelType::f16:
            write_slot<std::uint16_t>(image, steps, at);
            return;
        case PixelType::u8:
            write_slot<std::uint8_t>(image, steps, at);
            return;
    }
}

}  // namespace

std::size_t image_slot_bytes(const PipelineSteps& steps) {
    return static_cast<std::size_t>(steps.input_size.width * steps.input_size.height * 3) *
           pixel_bytes(steps.pixel_type);
}

void normalize_into(const RgbImage& image, const PipelineSteps& steps, std::span<std::byte> batch, std::int64_t slot) {
    if (image.size() != steps.input_size ||
        image.pixels.size() != static_cast<std::size_t>(image.width * image.height * 3))
        throw std::invalid_argument(fmt::format("cannot normalise a {}x{} image into a {} input", image.width,
                                                image.height, to_string(steps.input_size)));
    write_any(image, steps, slot_at(steps, batch, slot));
}

void fill_slot_black(const PipelineSteps& steps, std::span<std::byte> batch, std::int64_t slot) {
    RgbImage black;
    black.reshape(steps.input_size);
    std::fill(black.pixels.begin(), black.pixels.end(), std::uint8_t{0});
    write_any(black, steps, slot_at(steps, batch, slot));
}

namespace {

// What one worker saw of a batch: its spans folded per stage, and its failures.
struct WorkerPart {
    PipelineStageTime decode, resize, normalize;
    std::vector<ImageFailure> failures;
};

void fold(PipelineStageTime& into, const PipelineStageTime& part) {
    if (part.images > 0) add_span(into, {part.start_ns, part.end_ns, part.cpu_ns}, part.images);
}

void preprocess_one(const EncodedImage& image, std::size_t slot, const PipelineSteps& steps, std::span<std::byte> batch,
                    PreprocessScratch::Worker& buffers, WorkerPart& part, const ImageLimits& limits) {
    try {
        const StageTimer decode;
        decode_image(image.bytes, image.name, buffers.decoded, limits);
        add_span(part.decode, decode.stop(), 1);
    } catch (const ImageError& error) {
        part.failures.push_back({slot, error.kind(), error.what()});
        fill_slot_black(steps, batch, static_cast<std::int64_t>(slot));
        return;
    }
    const StageTimer resize;
    resize_image(buffers.decoded, steps, buffers.resized, buffers.resize);
    add_span(part.resize, resize.stop(), 1);
    const StageTimer normalize;
    normalize_into(buffers.resized, steps, batch, static_cast<std::int64_t>(slot));
    add_span(part.normalize, normalize.stop(), 1);
}

}  // namespace

PreprocessedBatch preprocess_batch(ThreadPool& pool, std::span<const EncodedImage* const> images,
                                   const PipelineSteps& steps, std::span<std::byte> batch, PreprocessScratch& scratch,
                                   const ImageLimits& limits) {
    if (images.size() * image_slot_bytes(steps) > batch.size())
        throw std::invalid_argument(fmt::format("a batch tensor of {} bytes cannot hold {} images of {} bytes",
                                                batch.size(), images.size(), image_slot_bytes(steps)));
    if (scratch.workers.size() < pool.size()) scratch.workers.resize(pool.size());
    std::vector<WorkerPart> parts(pool.size());
    pool.parallel_for(images.size(), [&](std::size_t index, std::size_t worker) {
        preprocess_one(*images[index], index, steps, batch, scratch.workers[worker], parts[worker], limits);
    });
    PreprocessedBatch result;
    result.decode.stage = PipelineStage::decode;
    result.resize.stage = PipelineStage::resize;
    result.normalize.stage = PipelineStage::normalize;
    for (auto& part : parts) {
        fold(result.decode, part.decode);
        fold(result.resize, part.resize);
        fold(result.normalize, part.normalize);
        result.failures.insert(result.failures.end(), part.failures.begin(), part.failures.end());
    }
    std::sort(result.failures.begin(), result.failures.end(),
              [](const ImageFailure& a, const ImageFailure& b) { return a.slot < b.slot; });
    return result;
}

}  // namespace inferbench::pipeline
