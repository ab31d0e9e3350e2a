// Where a pipeline cell's images come from: a folder of JPEG/PNG files, or synthetic images inferbench writes
// itself with the real encoder (so that decoding them costs what decoding a photo of that size does), cached so
// that every cell with the same settings reads the same files. Either way the encoded files are read into memory
// before anything is timed.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/pipeline.hpp"
#include "pipeline/image_codec.hpp"

namespace inferbench::pipeline {

// One image file's bytes as read, not yet decoded.
struct EncodedImage {
    std::string name;  // the file's name (a folder's) or "synthetic-0007.jpg"
    std::vector<std::uint8_t> bytes;
};

struct ImageSet {
    std::vector<EncodedImage> images;
    // One line per file left out (not an image, unreadable, header refused): "<file>: <why>".
    std::vector<std::string> skipped;
};

// The largest image file read (a bigger file is skipped with its line, never read).
inline constexpr std::uintmax_t kMaxImageFileBytes = std::uintmax_t{256} << 20;

// A folder's JPEG and PNG files (by their first bytes, not their names) in name order, at most `max_count`
// (0: all); anything else skipped with one line each. Each kept file's header is read and checked against
// `limits`. Throws UserError when the folder is missing or not a folder, or no image is left
// ("pipeline.images: <folder> holds no JPEG or PNG image (N files skipped): ...").
ImageSet read_image_folder(const std::filesystem::path& folder, std::int64_t max_count, const ImageLimits& limits = {});

// The natural-looking content of synthetic image `index` of a seed: smooth shading, overlapping shapes with
// soft edges and fine texture, so that a JPEG of it has a photo's entropy. Deterministic.
RgbImage synthetic_image(ImageSize size, std::uint64_t seed, std::int64_t index);

// Where the synthetic images of these settings are cached: <cache_dir>/pipeline-images/<one name per count,
// size, format, quality and content version>.
std::filesystem::path synthetic_images_dir(const PipelineSettings& settings, const std::filesystem::path& cache_dir);

// settings.image_count images of settings.image_size in settings.image_format (settings.jpeg_quality), written
// once into synthetic_images_dir (complete or absent: written aside and renamed into place) and read back.
// Throws UserError for settings out of range, EnvironmentError when the cache cannot be written.
ImageSet synthetic_images(const PipelineSettings& settings, const std::filesystem::path& cache_dir);

// The cell's images by settings.images: "synthetic" or a folder.
ImageSet load_images(const PipelineSettings& settings, const std::filesystem::path& cache_dir);

}  // namespace inferbench::pipeline
