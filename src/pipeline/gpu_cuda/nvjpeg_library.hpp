// nvJPEG opened at run time (its header is not needed to build): the few documented functions the decode stage
// calls, declared from NVIDIA's nvJPEG documentation with their C types, bound by dlsym, so a machine without
// nvJPEG gets one clear reason rather than a module that does not load.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

namespace inferbench::pipeline_cuda {

struct NvjpegHandleTag;
struct NvjpegStateTag;
using NvjpegHandle = NvjpegHandleTag*;  // nvjpegHandle_t
using NvjpegState = NvjpegStateTag*;    // nvjpegJpegState_t

// nvjpegImage_t: up to 4 channel planes and their pitches (interleaved RGB uses channel[0] only).
struct NvjpegImage {
    unsigned char* channel[4];
    std::size_t pitch[4];
};

// nvjpegStatus_t, nvjpegOutputFormat_t and libraryPropertyType values used here.
inline constexpr int kNvjpegSuccess = 0;
inline constexpr int kNvjpegOutputRgbInterleaved = 5;  // NVJPEG_OUTPUT_RGBI
inline constexpr int kMajorVersion = 0;                // MAJOR_VERSION
inline constexpr int kMinorVersion = 1;
inline constexpr int kPatchLevel = 2;

struct NvjpegApi {
    int (*GetProperty)(int type, int* value) = nullptr;
    int (*CreateSimple)(NvjpegHandle* handle) = nullptr;
    int (*Destroy)(NvjpegHandle handle) = nullptr;
    int (*JpegStateCreate)(NvjpegHandle handle, NvjpegState* state) = nullptr;
    int (*JpegStateDestroy)(NvjpegState state) = nullptr;
    int (*GetImageInfo)(NvjpegHandle handle, const unsigned char* data, std::size_t length, int* components,
                        int* subsampling, int* widths, int* heights) = nullptr;
    int (*Decode)(NvjpegHandle handle, NvjpegState state, const unsigned char* data, std::size_t length,
                  int output_format, NvjpegImage* destination, cudaStream_t stream) = nullptr;
    int (*DecodeBatchedInitialize)(NvjpegHandle handle, NvjpegState state, int batch_size, int max_cpu_threads,
                                   int output_format) = nullptr;
    int (*DecodeBatched)(NvjpegHandle handle, NvjpegState state, const unsigned char* const* data,
                         const std::size_t* lengths, NvjpegImage* destinations, cudaStream_t stream) = nullptr;
};

// nvjpegStatus_t's name ("NVJPEG_STATUS_BAD_JPEG") for a reason line.
const char* nvjpeg_status_name(int status);

class NvjpegLibrary {
public:
    // Tries `preferred` (a path or soname; empty: none), then libnvjpeg.so.13 and libnvjpeg.so.12. Throws
    // std::runtime_error naming every candidate and why it failed.
    static std::unique_ptr<NvjpegLibrary> open(const std::string& preferred);
    ~NvjpegLibrary();
    NvjpegLibrary(const NvjpegLibrary&) = delete;
    NvjpegLibrary& operator=(const NvjpegLibrary&) = delete;

    const NvjpegApi& api() const { return api_; }
    const std::string& path() const { return path_; }
    // "13.0.1", from nvjpegGetProperty.
    std::string version() const;

private:
    NvjpegLibrary() = default;
    void* handle_ = nullptr;
    std::string path_;
    NvjpegApi api_;
};

// A failed nvJPEG call as an exception with its status name.
void check_nvjpeg(int status, const char* what);

}  // namespace inferbench::pipeline_cuda
