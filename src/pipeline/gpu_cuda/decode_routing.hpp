// Host-side rules of the GPU decode and the per-class NMS merge, free of CUDA so that pipeline_tests checks them:
// which files nvJPEG is given at all (the rest are refused with a reason before any nvJPEG decode call), and how the
// kept boxes of class-by-class NMS runs are merged into batched_nms's order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "pipeline/gpu_stages_api.h"

namespace inferbench::pipeline_cuda {

// nvjpegChromaSubsampling_t values nvjpegGetImageInfo answers that matter here.
inline constexpr int kNvjpegCssGray = 6;      // NVJPEG_CSS_GRAY
inline constexpr int kNvjpegCssUnknown = -1;  // NVJPEG_CSS_UNKNOWN

// Whether the file's last bytes hold the JPEG end-of-image marker (FF D9). A JPEG cut short has none: nvJPEG then
// decodes what is there and fills the rest without an error, where the CPU decoder refuses the file. Trailing bytes
// after the marker (some cameras append data) are allowed up to `tail` bytes.
inline bool jpeg_has_end_marker(const unsigned char* data, std::size_t size, std::size_t tail = 4096) {
    if (!data || size < 4) return false;
    const std::size_t first = size > tail + 2 ? size - tail - 2 : 2;
    for (std::size_t i = size - 1; i >= first + 1; --i)
        if (data[i - 1] == 0xFF && data[i] == 0xD9) return true;
    return false;
}

// A refusal before decoding: the InferbenchGpuImageInfo status (INFERBENCH_GPU_REFUSED_*, 0: none) and the reason.
struct DecodeRefusal {
    int status = 0;
    std::string reason;
};

// Why nvJPEG must not be given this file (its header as nvjpegGetImageInfo read it); status 0 when it may.
// 1 component (grayscale, replicated to RGB) and 3 (YCbCr) are decoded; 4 (Adobe CMYK/YCCK) is refused: nvJPEG's
// interleaved RGB output has no CMYK conversion and decoding such a file corrupted the host heap (nvJPEG 13.0.1,
// H100/H200). Such a file is skipped with this reason; the CPU decoder (pipeline/image_codec) converts it.
inline DecodeRefusal gpu_decode_refusal(int components, int subsampling, const unsigned char* data, std::size_t size) {
    constexpr int unsupported = INFERBENCH_GPU_REFUSED_UNSUPPORTED;
    if (components == 4)
        return {unsupported, "4 components (an Adobe CMYK/YCCK JPEG): the GPU decoder does not convert CMYK; skipped (the CPU "
               "decoder takes it)"};
    if (components != 1 && components != 3)
        return {unsupported,
                std::to_string(components) + " components: the GPU decoder takes 1 (grayscale) or 3 (YCbCr)"};
    if (subsampling == kNvjpegCssUnknown)
        return {unsupported, "an unknown chroma subsampling: the GPU decoder cannot take it"};
    if (components == 1 && subsampling != kNvjpegCssGray)
        return {unsupported, "1 component without grayscale subsampling: the GPU decoder cannot take it"};
    if (!jpeg_has_end_marker(data, size))
        return {INFERBENCH_GPU_REFUSED_TRUNCATED,
                "no end-of-image marker: the JPEG data is truncated (the GPU decoder would fill the rest silently)"};
    return {};
}

// The files (positions) a batched decoder takes, in their order; the rest appended to `others` in theirs. Every file
// lands in exactly one of the two, so a file refused by the check is still decoded on the other path.
template <typename Supported>
std::vector<int> split_supported(const std::vector<int>& files, Supported&& supported, std::vector<int>& others) {
    std::vector<int> taken;
    for (const int i : files) (supported(i) ? taken : others).push_back(i);
    return taken;
}

// One class's NMS result: kept candidates by their position among all candidates.
struct KeptCandidate {
    int position = 0;
    float score = 0.0F;
    std::uint32_t id = 0;  // the tie-break: a lower id first, as the single-run NMS's sort key
};

// The kept candidates of separate class-by-class NMS runs in batched_nms's order (score descending, ties by id
// ascending), at most max_detections. Class-wise NMS never suppresses across classes, so this equals one run over
// all candidates.
inline std::vector<int> merge_kept_by_score(std::vector<KeptCandidate> kept, int max_detections) {
    std::sort(kept.begin(), kept.end(), [](const KeptCandidate& a, const KeptCandidate& b) {
        if (a.score != b.score) return a.score > b.score;
        return a.id < b.id;
    });
    std::vector<int> positions;
    const auto n = std::min(kept.size(), static_cast<std::size_t>(std::max(0, max_detections)));
    positions.reserve(n);
    for (std::size_t i = 0; i < n; ++i) positions.push_back(kept[i].position);
    return positions;
}

// Candidates' positions grouped by label (labels 0..classes-1; others ignored), each group in position order.
inline std::vector<std::vector<int>> positions_by_label(const std::vector<std::int32_t>& labels, int classes) {
    std::vector<std::vector<int>> groups(static_cast<std::size_t>(std::max(0, classes)));
    for (std::size_t i = 0; i < labels.size(); ++i)
        if (labels[i] >= 0 && labels[i] < classes) groups[static_cast<std::size_t>(labels[i])].push_back(static_cast<int>(i));
    return groups;
}

}  // namespace inferbench::pipeline_cuda
