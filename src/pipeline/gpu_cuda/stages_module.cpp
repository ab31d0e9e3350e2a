// The C functions of gpu_stages_api.h over GpuStages: each catches what its stage throws and writes the reason.
#include <algorithm>
#include <cstring>
#include <exception>
#include <string>

#include "pipeline/gpu_cuda/stages.hpp"
#include "pipeline/gpu_stages_api.h"

struct InferbenchGpuStages {
    InferbenchGpuStages(int device, const std::string& nvjpeg_library) : stages(device, nvjpeg_library) {}
    inferbench::pipeline_cuda::GpuStages stages;
};

namespace {

void write_error(char* error, size_t error_size, const std::string& text) {
    if (!error || error_size == 0) return;
    const std::size_t n = std::min(text.size(), error_size - 1);
    std::memcpy(error, text.data(), n);
    error[n] = '\0';
}

template <typename Body>
int guarded(char* error, size_t error_size, Body&& body) {
    try {
        body();
        return 0;
    } catch (const std::exception& e) {
        write_error(error, error_size, e.what());
    } catch (...) {
        write_error(error, error_size, "an unknown error in the GPU stages module");
    }
    return 1;
}

}  // namespace

#define INFERBENCH_EXPORT __attribute__((visibility("default")))

extern "C" {

INFERBENCH_EXPORT int inferbench_gpu_stages_api_version(void) { return INFERBENCH_GPU_STAGES_API_VERSION; }

INFERBENCH_EXPORT int inferbench_gpu_stages_create(int device, const char* nvjpeg_library, InferbenchGpuStages** out,
                                                   char* error, size_t error_size) {
    return guarded(error, error_size, [&] {
        *out = nullptr;
        *out = new InferbenchGpuStages(device, nvjpeg_library ? nvjpeg_library : "");
    });
}

INFERBENCH_EXPORT void inferbench_gpu_stages_destroy(InferbenchGpuStages* stages) { delete stages; }

INFERBENCH_EXPORT int inferbench_gpu_stages_describe(const InferbenchGpuStages* stages, char* text, size_t text_size) {
    write_error(text, text_size, stages->stages.description());
    return 0;
}

INFERBENCH_EXPORT int inferbench_gpu_alloc(InferbenchGpuStages* stages, size_t bytes, void** out, char* error,
                                           size_t error_size) {
    return guarded(error, error_size, [&] {
        stages->stages.activate();
        *out = nullptr;
        inferbench::pipeline_cuda::check(cudaMalloc(out, bytes > 0 ? bytes : 1), "cudaMalloc");
    });
}

INFERBENCH_EXPORT void inferbench_gpu_free(InferbenchGpuStages* stages, void* device) {
    if (!stages || !device) return;
    try {
        stages->stages.activate();
    } catch (const std::exception&) {
        return;  // the device is gone: nothing left to free on it
    }
    cudaFree(device);
}

INFERBENCH_EXPORT int inferbench_gpu_copy(InferbenchGpuStages* stages, void* destination, const void* source,
                                          size_t bytes, int to_device, char* error, size_t error_size) {
    return guarded(error, error_size, [&] {
        stages->stages.activate();
        inferbench::pipeline_cuda::check(
            cudaMemcpy(destination, source, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost),
            "cudaMemcpy");
    });
}

INFERBENCH_EXPORT int inferbench_gpu_decode_jpeg(InferbenchGpuStages* stages, const unsigned char* const* data,
                                                 const size_t* sizes, int count, InferbenchGpuImageInfo* infos,
                                                 char* error, size_t error_size) {
    return guarded(error, error_size, [&] { stages->stages.decode(data, sizes, count, infos); });
}

INFERBENCH_EXPORT int inferbench_gpu_decoded_pixels(InferbenchGpuStages* stages, int image, unsigned char* host,
                                                    size_t bytes, char* error, size_t error_size) {
    return guarded(error, error_size, [&] { stages->stages.decoded_pixels(image, host, bytes); });
}

INFERBENCH_EXPORT int inferbench_gpu_preprocess(InferbenchGpuStages* stages, const InferbenchGpuTensorFormat* format,
                                                const InferbenchGpuImagePlan* plans, int count, void* device_batch,
                                                char* error, size_t error_size) {
    return guarded(error, error_size, [&] { stages->stages.preprocess(*format, plans, count, device_batch); });
}

INFERBENCH_EXPORT int inferbench_gpu_nms(InferbenchGpuStages* stages, const float* device_boxes,
                                         const float* device_scores, const int32_t* device_labels, int count,
                                         const InferbenchGpuNmsSettings* settings, int* kept, int* kept_count,
                                         char* error, size_t error_size) {
    return guarded(error, error_size, [&] {
        *kept_count = 0;
        const int n = stages->stages.nms(device_boxes, device_scores, device_labels, nullptr, count, *settings);
        stages->stages.kept_positions(kept, n);
        *kept_count = n;
    });
}

INFERBENCH_EXPORT int inferbench_gpu_ssd_detect(InferbenchGpuStages* stages, const InferbenchGpuSsdDecode* decode,
                                                const InferbenchGpuNmsSettings* nms, const float* device_locs,
                                                const float* device_scores, int batch, InferbenchGpuDetection* out,
                                                int* counts, char* error, size_t error_size) {
    return guarded(error, error_size,
                   [&] { stages->stages.ssd_detect(*decode, *nms, device_locs, device_scores, batch, out, counts); });
}

}  // extern "C"
