/* The C interface of the GPU pipeline stages module (libinferbench_pipeline_cuda.so), opened with dlopen by the
 * pipeline's GpuStages (pipeline/gpu_stages.hpp) so that the CLI runs where there is no CUDA: nvJPEG decode (the
 * library itself opened at run time), resize + normalise into a batch tensor, SSD box decoding and class-wise NMS.
 * Plain C types only; checked by its API version. Every function returns 0 on success, else writes a one-line
 * reason into error (error_size bytes). Every call has finished its GPU work when it returns (its own stream,
 * synchronised), so a stage's wall time is its time and device memory it wrote is ready for another stream. */
#ifndef INFERBENCH_PIPELINE_GPU_STAGES_API_H
#define INFERBENCH_PIPELINE_GPU_STAGES_API_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INFERBENCH_GPU_STAGES_API_VERSION 1

typedef struct InferbenchGpuStages InferbenchGpuStages;

/* One decoded image: its size, and status 0, or the nvJPEG status that refused it with a reason. */
struct InferbenchGpuImageInfo {
    int width;
    int height;
    int components; /* in the file: 1 grayscale, 3 YCbCr, 4 CMYK/YCCK */
    int status;
    char reason[160];
};

/* One axis of a resize as pipeline/resize's resize_weights makes it: output i (of placed_count, written from
 * placed_begin on in the model input) reads taps[i] samples from start[i] with fixed-point weights
 * weights[i * max_taps + j] (host memory). */
struct InferbenchGpuAxis {
    int placed_begin;
    int placed_count;
    int max_taps;
    const int32_t* start;
    const int32_t* taps;
    const int32_t* weights;
};

/* How decoded image `image` (its index in the last decode) becomes slot `slot` of the batch. */
struct InferbenchGpuImagePlan {
    int image;
    int slot;
    int first_row; /* source rows the horizontal pass reads: [first_row, first_row + row_count) */
    int row_count;
    struct InferbenchGpuAxis x;
    struct InferbenchGpuAxis y;
};

/* The batch tensor: 3 x height x width per image (nchw) or height x width x 3, elements of element_bytes taken from
 * table (host memory, 3 x 256 elements: output channel o's element for each 0..255 value, as the CPU's
 * normalize_into writes it); output channel o reads RGB channel (bgr ? 2 - o : o); fill outside the placed part. */
struct InferbenchGpuTensorFormat {
    int width;
    int height;
    int nchw;
    int bgr;
    int element_bytes;
    int fill;
    const void* table;
};

#define INFERBENCH_GPU_SSD_TF 1  /* TF's SSD (ssd-mobilenet): boxes [b, anchors, 4], logits [b, anchors, classes] */
#define INFERBENCH_GPU_SSD_R34 2 /* MLPerf's SSD-ResNet34: locs [b, 4, anchors], confs [b, classes, anchors] */

/* SSD decoding as pipeline/box_decoding's: each anchor's box against its prior, each class but 0 (the background)
 * a candidate where its score (TF: sigmoid; R34: softmax over the classes) is above score_threshold. */
struct InferbenchGpuSsdDecode {
    int coding;
    int anchors;
    int classes;
    int input_width; /* boxes in the model input's pixels */
    int input_height;
    float score_threshold;
    const float* priors; /* host memory, [anchors] x (cx, cy, w, h) in [0, 1] */
};

struct InferbenchGpuNmsSettings {
    float iou_threshold; /* a box overlapping a kept box of its class by more is suppressed */
    int max_detections;  /* kept per image at most */
};

struct InferbenchGpuDetection {
    float box[4]; /* x1, y1, x2, y2 */
    float score;
    int label;
    int candidate; /* its index among the image's candidates (anchor * classes + class for SSD) */
};

int inferbench_gpu_stages_api_version(void);
/* Opens CUDA device `device` and nvJPEG: nvjpeg_library is tried first (a path or soname; NULL or "": none),
 * then libnvjpeg.so.13 and libnvjpeg.so.12. */
int inferbench_gpu_stages_create(int device, const char* nvjpeg_library, InferbenchGpuStages** out, char* error,
                                 size_t error_size);
void inferbench_gpu_stages_destroy(InferbenchGpuStages* stages);
/* "NVIDIA H100 80GB HBM3 (compute 9.0), nvJPEG 13.0.1 from libnvjpeg.so.13" */
int inferbench_gpu_stages_describe(const InferbenchGpuStages* stages, char* text, size_t text_size);

/* Device memory for a batch tensor or candidates, and copies (synchronous). */
int inferbench_gpu_alloc(InferbenchGpuStages* stages, size_t bytes, void** out, char* error, size_t error_size);
void inferbench_gpu_free(InferbenchGpuStages* stages, void* device);
int inferbench_gpu_copy(InferbenchGpuStages* stages, void* destination, const void* source, size_t bytes, int to_device,
                        char* error, size_t error_size);

/* Decodes `count` JPEG files (host memory) to RGB8 HWC in device memory the module keeps until the next decode,
 * with nvJPEG's batched decode; a file nvJPEG refuses gets its info's status and reason and the others are decoded.
 * Returns non-zero only when the decode as a whole failed. */
int inferbench_gpu_decode_jpeg(InferbenchGpuStages* stages, const unsigned char* const* data, const size_t* sizes,
                               int count, struct InferbenchGpuImageInfo* infos, char* error, size_t error_size);
/* A decoded image's RGB8 HWC pixels copied to host memory (width * height * 3 bytes). */
int inferbench_gpu_decoded_pixels(InferbenchGpuStages* stages, int image, unsigned char* host, size_t bytes,
                                  char* error, size_t error_size);
/* Resizes and normalises decoded images into their slots of a batch tensor in device memory. */
int inferbench_gpu_preprocess(InferbenchGpuStages* stages, const struct InferbenchGpuTensorFormat* format,
                              const struct InferbenchGpuImagePlan* plans, int count, void* device_batch, char* error,
                              size_t error_size);
/* Class-wise NMS of one image's candidates in device memory (boxes [count, 4], scores, labels) as
 * pipeline/nms's batched_nms (torchvision's): the kept candidates' indices in order of score (ties: the lower index
 * first), at most max_detections, into host `kept` (room for max_detections), their number into kept_count. */
int inferbench_gpu_nms(InferbenchGpuStages* stages, const float* device_boxes, const float* device_scores,
                       const int32_t* device_labels, int count, const struct InferbenchGpuNmsSettings* settings,
                       int* kept, int* kept_count, char* error, size_t error_size);
/* SSD outputs in device memory (float32) to detections: each image's candidates decoded, then class-wise NMS (as
 * pipeline/nms's select_detections with every candidate entering); detections into host `out`
 * (batch * max_detections), each image's count into counts. */
int inferbench_gpu_ssd_detect(InferbenchGpuStages* stages, const struct InferbenchGpuSsdDecode* decode,
                              const struct InferbenchGpuNmsSettings* nms, const float* device_locs,
                              const float* device_scores, int batch, struct InferbenchGpuDetection* out, int* counts,
                              char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
