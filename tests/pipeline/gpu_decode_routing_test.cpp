// The GPU decode's host-side rules (which files nvJPEG is given) and the class-by-class NMS merge, without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "pipeline/gpu_cuda/decode_routing.hpp"

namespace pc = inferbench::pipeline_cuda;

namespace {

// A JPEG-shaped byte string: SOI, `body` filler bytes, then EOI unless `truncated`, then `trailing` bytes.
std::vector<unsigned char> jpeg_bytes(std::size_t body, bool truncated, std::size_t trailing = 0) {
    std::vector<unsigned char> bytes(2 + body + (truncated ? 0 : 2) + trailing, 0x12);
    bytes[0] = 0xFF;
    bytes[1] = 0xD8;
    if (!truncated) {
        bytes[2 + body] = 0xFF;
        bytes[3 + body] = 0xD9;
    }
    for (std::size_t i = bytes.size() - trailing; i < bytes.size(); ++i) bytes[i] = 0x00;
    return bytes;
}

pc::DecodeRefusal refusal(int components, int subsampling, const std::vector<unsigned char>& bytes) {
    return pc::gpu_decode_refusal(components, subsampling, bytes.data(), bytes.size());
}

}  // namespace

TEST(GpuDecodeRouting, ColourAndGrayscaleJpegsGoToTheGpu) {
    const auto whole = jpeg_bytes(1000, false);
    EXPECT_EQ(refusal(3, 2, whole).status, 0);  // 4:2:0
    EXPECT_EQ(refusal(3, 0, whole).status, 0);  // 4:4:4
    EXPECT_EQ(refusal(1, pc::kNvjpegCssGray, whole).status, 0);
}

TEST(GpuDecodeRouting, CmykAndOddComponentCountsAreRefusedAsUnsupported) {
    const auto whole = jpeg_bytes(1000, false);
    const auto cmyk = refusal(4, pc::kNvjpegCssUnknown, whole);
    EXPECT_EQ(cmyk.status, INFERBENCH_GPU_REFUSED_UNSUPPORTED);
    EXPECT_NE(cmyk.reason.find("CMYK"), std::string::npos);
    EXPECT_EQ(refusal(4, 0, whole).status, INFERBENCH_GPU_REFUSED_UNSUPPORTED);
    EXPECT_EQ(refusal(2, 0, whole).status, INFERBENCH_GPU_REFUSED_UNSUPPORTED);
    EXPECT_EQ(refusal(0, 0, whole).status, INFERBENCH_GPU_REFUSED_UNSUPPORTED);
    EXPECT_EQ(refusal(3, pc::kNvjpegCssUnknown, whole).status, INFERBENCH_GPU_REFUSED_UNSUPPORTED);
    EXPECT_EQ(refusal(1, 2, whole).status, INFERBENCH_GPU_REFUSED_UNSUPPORTED);
}

TEST(GpuDecodeRouting, ATruncatedJpegIsRefusedBeforeTheGpuSeesIt) {
    const auto cut = jpeg_bytes(5000, true);
    const auto r = refusal(3, 2, cut);
    EXPECT_EQ(r.status, INFERBENCH_GPU_REFUSED_TRUNCATED);
    EXPECT_NE(r.reason.find("truncated"), std::string::npos);
    // An end marker inside the first bytes (an embedded thumbnail's) does not make a cut file whole.
    auto thumbnail = jpeg_bytes(10 + 8000, true);
    thumbnail[12] = 0xFF;
    thumbnail[13] = 0xD9;
    EXPECT_EQ(refusal(3, 2, thumbnail).status, INFERBENCH_GPU_REFUSED_TRUNCATED);
}

TEST(GpuDecodeRouting, EndMarkerFollowedBySomeTrailingBytesIsWhole) {
    EXPECT_TRUE(pc::jpeg_has_end_marker(jpeg_bytes(100, false, 100).data(), jpeg_bytes(100, false, 100).size()));
    const auto far = jpeg_bytes(100, false, 10000);
    EXPECT_FALSE(pc::jpeg_has_end_marker(far.data(), far.size()));
    const unsigned char tiny[] = {0xFF, 0xD9};
    EXPECT_FALSE(pc::jpeg_has_end_marker(tiny, sizeof tiny));
    EXPECT_FALSE(pc::jpeg_has_end_marker(nullptr, 0));
}

TEST(GpuNmsByClass, MergesClassRunsByScoreThenIdAndTruncates) {
    std::vector<pc::KeptCandidate> kept{{0, 0.5F, 7}, {1, 0.9F, 3}, {2, 0.5F, 2}, {3, 0.7F, 9}, {4, 0.1F, 1}};
    EXPECT_EQ(pc::merge_kept_by_score(kept, 10), (std::vector<int>{1, 3, 2, 0, 4}));
    EXPECT_EQ(pc::merge_kept_by_score(kept, 2), (std::vector<int>{1, 3}));
    EXPECT_TRUE(pc::merge_kept_by_score(kept, 0).empty());
    EXPECT_TRUE(pc::merge_kept_by_score({}, 5).empty());
}

TEST(GpuNmsByClass, GroupsPositionsByLabelInOrder) {
    const std::vector<std::int32_t> labels{2, 1, 2, 0, 1, 5, -1};
    const auto groups = pc::positions_by_label(labels, 3);
    ASSERT_EQ(groups.size(), 3U);
    EXPECT_EQ(groups[0], (std::vector<int>{3}));
    EXPECT_EQ(groups[1], (std::vector<int>{1, 4}));
    EXPECT_EQ(groups[2], (std::vector<int>{0, 2}));
}

TEST(GpuDecodeRouting, EveryFileGoesToExactlyOneBatchInOrder) {
    std::vector<int> others{99};
    const auto taken = pc::split_supported({0, 2, 3, 5, 8}, [](int i) { return i % 2 == 0; }, others);
    EXPECT_EQ(taken, (std::vector<int>{0, 2, 8}));
    EXPECT_EQ(others, (std::vector<int>{99, 3, 5}));
    std::vector<int> none;
    EXPECT_TRUE(pc::split_supported({1, 4}, [](int) { return false; }, none).empty());
    EXPECT_EQ(none, (std::vector<int>{1, 4}));
}
