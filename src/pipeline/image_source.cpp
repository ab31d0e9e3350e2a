#include "pipeline/image_source.hpp"

#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/splitmix64.hpp"

namespace inferbench::pipeline {
namespace {

namespace fs = std::filesystem;

// Bumped whenever synthetic_image's content changes, so that a cache of older images is not reused.
constexpr int kSyntheticContentVersion = 1;
constexpr std::uint64_t kSyntheticSeed = 0x1F0E5EEDULL;

// The first `count` bytes of a file (fewer where it is shorter).
std::vector<std::uint8_t> read_prefix(std::ifstream& in, std::size_t count) {
    std::vector<std::uint8_t> bytes(count);
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count));
    bytes.resize(static_cast<std::size_t>(in.gcount()));
    return bytes;
}

// A folder's file as an image, or the line saying why it is left out.
std::optional<EncodedImage> read_image_file(const fs::path& file, const ImageLimits& limits, std::string& why) {
    std::error_code error;
    const auto size = fs::file_size(file, error);
    if (error) {
        why = fmt::format("{}: cannot read its size ({})", file.string(), error.message());
        return std::nullopt;
    }
    if (size > kMaxImageFileBytes) {
        why = fmt::format("{}: {} bytes, above the {} MiB an image file may have", file.string(), size,
                          kMaxImageFileBytes >> 20);
        return std::nullopt;
    }
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        why = fmt::format("{}: cannot be opened", file.string());
        return std::nullopt;
    }
    EncodedImage image{file.filename().string(), read_prefix(in, 8)};
    if (!sniff_image_format(image.bytes)) {
        why = fmt::format("{}: not a JPEG or PNG file (by its first bytes)", file.string());
        return std::nullopt;
    }
    in.seekg(0);
    image.bytes = read_prefix(in, static_cast<std::size_t>(size));
    try {
        read_image_header(image.bytes, file.string(), limits);
    } catch (const ImageError& refused) {
        why = refused.what();
        return std::nullopt;
    }
    return image;
}

std::vector<fs::path> files_in_name_order(const fs::path& folder) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder))
        if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename().string() < b.filename().string(); });
    return files;
}

std::string synthetic_name(std::int64_t index, ImageFormat format) {
    return fmt::format("synthetic-{:04}.{}", index, format == ImageFormat::jpeg ? "jpg" : "png");
}

void check_synthetic_settings(const PipelineSettings& settings) {
    if (settings.image_count < 1)
        throw UserError(fmt::format("pipeline.image_count {} is below 1: synthetic images need a count of at least 1",
                                    settings.image_count));
    const ImageSize size = settings.image_size;
    if (size.width < 1 || size.height < 1 || size.width > kMaxImageSide || size.height > kMaxImageSide ||
        size.width * size.height > kMaxImagePixels)
        throw UserError(fmt::format("pipeline.image_size {} is outside 1..{} a side or above {} pixels",
                                    to_string(size), kMaxImageSide, kMaxImagePixels));
    if (settings.image_format == ImageFormat::jpeg && (settings.jpeg_quality < 1 || settings.jpeg_quality > 100))
        throw UserError(fmt::format("pipeline.jpeg_quality {} is outside 1..100", settings.jpeg_quality));
}

// A fresh staging folder beside `dir`, named as core/file_io's, so that remove_stale_staging clears what a
// killed writer left.
fs::path make_staging_folder(const fs::path& dir) {
    std::string name = (dir.parent_path() / (std::string(kStagingPrefix) + "XXXXXX")).string();
    if (::mkdtemp(name.data()) == nullptr)
        throw EnvironmentError(
            fmt::format("cannot write synthetic images beside {}: {}", dir.string(), errno_text(errno)));
    return name;
}

// Writes the images into a private folder beside `dir` and renames it into place; where another writer got there
// first, its folder is kept and ours removed.
void write_synthetic_images(const PipelineSettings& settings, const fs::path& dir) {
    fs::create_directories(dir.parent_path());
    remove_stale_staging(dir.parent_path());
    const fs::path staging = make_staging_folder(dir);
    for (std::int64_t i = 0; i < settings.image_count; ++i) {
        const RgbImage image = synthetic_image(settings.image_size, kSyntheticSeed, i);
        const auto bytes = encode_image(image, settings.image_format, static_cast<int>(settings.jpeg_quality));
        std::ofstream out(staging / synthetic_name(i, settings.image_format), std::ios::binary);
        out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        out.close();
        if (!out) throw EnvironmentError(fmt::format("cannot write synthetic images into {}", staging.string()));
    }
    std::error_code error;
    fs::rename(staging, dir, error);
    if (error) {
        fs::remove_all(staging);
        if (!fs::is_directory(dir))
            throw EnvironmentError(fmt::format("cannot make {}: {}", dir.string(), error.message()));
    }
}

}  // namespace

ImageSet read_image_folder(const fs::path& folder, std::int64_t max_count, const ImageLimits& limits) {
    std::error_code error;
    if (!fs::is_directory(folder, error))
        throw UserError(
            fmt::format("pipeline.images: {} is not a folder: name a folder of JPEG or PNG images, or "
                        "\"synthetic\"",
                        folder.string()));
    ImageSet set;
    for (const fs::path& file : files_in_name_order(folder)) {
        if (max_count > 0 && static_cast<std::int64_t>(set.images.size()) >= max_count) break;
        std::string why;
        if (auto image = read_image_file(file, limits, why))
            set.images.push_back(std::move(*image));
        else
            set.skipped.push_back(std::move(why));
    }
    if (set.images.empty())
        throw UserError(
            fmt::format("pipeline.images: {} holds no JPEG or PNG image ({} files skipped): add images "
                        "or use \"synthetic\"",
                        folder.string(), set.skipped.size()));
    return set;
}

fs::path synthetic_images_dir(const PipelineSettings& settings, const fs::path& cache_dir) {
    const std::string quality =
        settings.image_format == ImageFormat::jpeg ? fmt::format("-q{}", settings.jpeg_quality) : "";
    return cache_dir / "pipeline-images" /
           fmt::format("v{}-{}-{}-{}{}", kSyntheticContentVersion, settings.image_count, to_string(settings.image_size),
                       to_string(settings.image_format), quality);
}

ImageSet synthetic_images(const PipelineSettings& settings, const fs::path& cache_dir) {
    check_synthetic_settings(settings);
    const fs::path dir = synthetic_images_dir(settings, cache_dir);
    if (!fs::is_directory(dir)) write_synthetic_images(settings, dir);
    ImageSet set;
    for (std::int64_t i = 0; i < settings.image_count; ++i) {
        const fs::path file = dir / synthetic_name(i, settings.image_format);
        std::ifstream in(file, std::ios::binary);
        if (!in)
            throw EnvironmentError(fmt::format("{} is missing from the image cache: remove {} to have it written again",
                                               file.string(), dir.string()));
        in.seekg(0, std::ios::end);
        const auto size = static_cast<std::size_t>(in.tellg());
        in.seekg(0);
        set.images.push_back({file.filename().string(), read_prefix(in, size)});
    }
    return set;
}

ImageSet load_images(const PipelineSettings& settings, const fs::path& cache_dir) {
    if (settings.images == kSyntheticImages) return synthetic_images(settings, cache_dir);
    return read_image_folder(settings.images, settings.image_count);
}

}  // namespace inferbench::pipeline
