// libFuzzer entry point for the PNG decoder (pipeline/image_codec): any input must give an RGB image within the
// limits or an ImageError; any other exception, a crash, an allocation past the limits or a sanitizer report is a
// finding. The limits are smaller than the CLI's so that a hostile header that passes them still fits the
// fuzzer's memory. Seeds: any PNG files, e.g. the pipeline tests' synthetic images.
#include <cstddef>
#include <cstdint>
#include <span>

#include "pipeline/image_codec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> bytes(data, size);
    if (inferbench::pipeline::sniff_image_format(bytes) != inferbench::ImageFormat::png) return 0;
    const inferbench::pipeline::ImageLimits limits{.max_side = 4096, .max_pixels = std::int64_t{1} << 22};
    try {
        const auto image = inferbench::pipeline::decode_image(bytes, "fuzz.png", limits);
        if (image.width * image.height > limits.max_pixels ||
            image.pixels.size() != static_cast<std::size_t>(image.width * image.height * 3))
            __builtin_trap();
    } catch (const inferbench::pipeline::ImageError&) {
    }
    return 0;
}
