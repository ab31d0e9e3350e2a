// The GPU stages' loader where they cannot run: no module, a file that is not one, and (where nvcc built it) the
// real module on a machine without a GPU, each refused with one line saying why; and the module's machine code for
// Hopper, read from its fat binary.
#include "pipeline/gpu_stages.hpp"

#include <gtest/gtest.h>

#include <elf.h>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "common/scratch_dir.hpp"

namespace inferbench::pipeline {
namespace {

using inferbench::testing::ScratchDir;

TEST(GpuStages, NoModuleSaysWhereItLookedAndHowToFix) {
    const ScratchDir dir;
    GpuStagesOptions options;
    options.module_candidates = {dir.path() / "libinferbench_pipeline_cuda.so"};
    const auto opening = GpuStages::open(options);
    EXPECT_EQ(opening.stages, nullptr);
    EXPECT_NE(opening.unavailable.find("not there"), std::string::npos) << opening.unavailable;
    EXPECT_NE(opening.unavailable.find("INFERBENCH_PIPELINE_CUDA_MODULE"), std::string::npos);
    EXPECT_EQ(opening.unavailable.find('\n'), std::string::npos);
}

TEST(GpuStages, AFileThatIsNoModuleIsRefusedWithTheLoadersReason) {
    const ScratchDir dir;
    dir.write("libinferbench_pipeline_cuda.so", "not a shared library");
    GpuStagesOptions options;
    options.module_candidates = {dir.path() / "libinferbench_pipeline_cuda.so"};
    const auto opening = GpuStages::open(options);
    EXPECT_EQ(opening.stages, nullptr);
    EXPECT_NE(opening.unavailable.find("no GPU pipeline stages module"), std::string::npos) << opening.unavailable;
    EXPECT_NE(opening.unavailable.find("libinferbench_pipeline_cuda.so"), std::string::npos);
}

TEST(GpuStages, DecoderRefusalsCountAsTheCpuDecodersKinds) {
    EXPECT_EQ(gpu_decode_error_kind(3, {}), ImageErrorKind::corrupt);      // NVJPEG_STATUS_BAD_JPEG
    EXPECT_EQ(gpu_decode_error_kind(10, {}), ImageErrorKind::corrupt);     // INCOMPLETE_BITSTREAM (truncated)
    EXPECT_EQ(gpu_decode_error_kind(4, {}), ImageErrorKind::unsupported);  // JPEG_NOT_SUPPORTED
    EXPECT_EQ(gpu_decode_error_kind(-1, {30000, 30000}), ImageErrorKind::too_large);
    EXPECT_EQ(gpu_decode_error_kind(-1, {0, 480}), ImageErrorKind::empty);
}

TEST(GpuStages, PostProcessingOnTheGpuIsSsdBoxesAndNmsOnly) {
    PipelineSteps steps;
    steps.post = PostProcess::ssd_boxes;
    EXPECT_EQ(gpu_postprocess_problem(steps, {BoxCoding::ssd_tf_anchors, 0}), std::nullopt);
    EXPECT_EQ(gpu_postprocess_problem(steps, {BoxCoding::ssd_r34_dboxes, 0}), std::nullopt);
    const auto capped = gpu_postprocess_problem(steps, {BoxCoding::ssd_r34_dboxes, 200});
    ASSERT_TRUE(capped);
    EXPECT_NE(capped->find("200 candidates per class"), std::string::npos) << *capped;
    EXPECT_NE(capped->find("pipeline.postprocess: cpu"), std::string::npos);
    steps.post = PostProcess::yolo_boxes;
    const auto yolo = gpu_postprocess_problem(steps, {BoxCoding::yolov3, 0});
    ASSERT_TRUE(yolo);
    EXPECT_NE(yolo->find("yolo_boxes"), std::string::npos) << *yolo;
    steps.post = PostProcess::softmax_topk;
    EXPECT_TRUE(gpu_postprocess_problem(steps, {}));
}

#ifdef INFERBENCH_PIPELINE_CUDA_MODULE_PATH

std::vector<char> read_all(const char* path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The bytes of an ELF64 file's section `name`, or nothing.
std::optional<std::vector<char>> elf_section(const std::vector<char>& file, const char* name) {
    if (file.size() < sizeof(Elf64_Ehdr)) return std::nullopt;
    Elf64_Ehdr header;
    std::memcpy(&header, file.data(), sizeof header);
    if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return std::nullopt;
    const auto section = [&](std::size_t i) {
        Elf64_Shdr s;
        std::memcpy(&s, file.data() + header.e_shoff + i * header.e_shentsize, sizeof s);
        return s;
    };
    const Elf64_Shdr names = section(header.e_shstrndx);
    for (std::size_t i = 0; i < header.e_shnum; ++i) {
        const Elf64_Shdr s = section(i);
        if (std::strcmp(file.data() + names.sh_offset + s.sh_name, name) == 0)
            return std::vector<char>(file.begin() + static_cast<std::ptrdiff_t>(s.sh_offset),
                                     file.begin() + static_cast<std::ptrdiff_t>(s.sh_offset + s.sh_size));
    }
    return std::nullopt;
}

// The (kind, architecture) of each entry of CUDA fat binaries: kind 1 PTX, 2 machine code (a cubin).
std::vector<std::pair<int, int>> fatbin_entries(const std::vector<char>& section) {
    std::vector<std::pair<int, int>> entries;
    std::size_t at = 0;
    while (at + 16 <= section.size()) {
        std::uint32_t magic = 0;
        std::uint64_t size = 0;
        std::uint16_t header_size = 0;
        std::memcpy(&magic, &section[at], 4);
        if (magic != 0xBA55ED50U) break;
        std::memcpy(&header_size, &section[at + 6], 2);
        std::memcpy(&size, &section[at + 8], 8);
        std::size_t entry = at + header_size;
        const std::size_t end = entry + size;
        while (entry + 32 <= end) {
            std::uint16_t kind = 0;
            std::uint32_t entry_header = 0;
            std::uint64_t payload = 0;
            std::uint32_t arch = 0;
            std::memcpy(&kind, &section[entry], 2);
            std::memcpy(&entry_header, &section[entry + 4], 4);
            std::memcpy(&payload, &section[entry + 8], 8);
            std::memcpy(&arch, &section[entry + 28], 4);
            entries.emplace_back(kind, static_cast<int>(arch));
            entry += entry_header + payload;
        }
        at = end;
    }
    return entries;
}

TEST(GpuStages, ModuleCarriesHopperMachineCodeAndPortablePtx) {
    const auto section = elf_section(read_all(INFERBENCH_PIPELINE_CUDA_MODULE_PATH), ".nv_fatbin");
    ASSERT_TRUE(section) << "no .nv_fatbin in " << INFERBENCH_PIPELINE_CUDA_MODULE_PATH;
    const auto entries = fatbin_entries(*section);
    EXPECT_NE(std::find(entries.begin(), entries.end(), std::pair{2, 90}), entries.end()) << "no sm_90 cubin";
    EXPECT_NE(std::find(entries.begin(), entries.end(), std::pair{1, 75}), entries.end()) << "no compute_75 PTX";
}

TEST(GpuStages, TheBuiltModuleLoadsAndWithoutAGpuSaysSo) {
    GpuStagesOptions options;
    options.module_candidates = {INFERBENCH_PIPELINE_CUDA_MODULE_PATH};
    options.nvjpeg_library = "/nonexistent/libnvjpeg.so";
    const auto opening = GpuStages::open(options);
    if (opening.stages) GTEST_SKIP() << "a GPU and nvJPEG are here: " << opening.stages->description();
    // The module loaded (its API version matched: no "speaks GPU stages API"), then CUDA or nvJPEG refused.
    EXPECT_NE(opening.unavailable.find("GPU stages cannot run on cuda:0: "), std::string::npos) << opening.unavailable;
    EXPECT_EQ(opening.unavailable.find('\n'), std::string::npos);
}

TEST(GpuStages, ANonexistentDeviceIsRefused) {
    GpuStagesOptions options;
    options.module_candidates = {INFERBENCH_PIPELINE_CUDA_MODULE_PATH};
    options.device = 4096;
    const auto opening = GpuStages::open(options);
    EXPECT_EQ(opening.stages, nullptr);
    EXPECT_NE(opening.unavailable.find("cuda:4096"), std::string::npos) << opening.unavailable;
}

#endif

}  // namespace
}  // namespace inferbench::pipeline
