/* The C interface of the CUDA probe module (libinferbench_probe_cuda.so), opened with dlopen by
 * `inferbench probe` so that the CLI runs where there is no CUDA. Plain C types only: the module is
 * built by nvcc with the CUDA runtime linked statically, and is checked by its API version. */
#ifndef INFERBENCH_DEVICES_PROBE_API_H
#define INFERBENCH_DEVICES_PROBE_API_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define INFERBENCH_PROBE_API_VERSION 1

struct InferbenchProbeDevice {
    int index;               /* CUDA device ordinal */
    char name[256];          /* cudaDeviceProp::name, "NVIDIA H200" */
    char uuid[64];           /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML prints it */
    char pci_bus_id[32];     /* "0000:19:00.0" */
    int compute_major;
    int compute_minor;
    int multiprocessors;
    long long memory_bytes;
    long long l2_bytes;
    int max_sm_clock_khz;    /* 0 where the runtime does not say */
};

struct InferbenchProbeRequest {
    int device;                    /* CUDA device ordinal */
    const char* probes;            /* comma-separated names, or "all" */
    const char* cublaslt_library;  /* path or soname tried first; NULL: libcublasLt.so.13, then .12 */
    long long dram_bytes;          /* per buffer of the DRAM copy/triad (0: 1 GiB) */
    long long l2_bytes;            /* buffer of the L2 probe (0: 40% of the L2) */
    int gemm_size;                 /* M = N = K (0: 8192) */
    int repetitions;               /* timed repetitions per probe, best kept (0: 5) */
};

/* One result. `skipped` is non-NULL when the probe could not run here (then value is 0). */
struct InferbenchProbeMeasurement {
    const char* name;       /* "gemm_bf16", "fma_fp32", "dram_copy", ... */
    double value;           /* in unit */
    const char* unit;       /* "TFLOP/s", "TOPS", "GB/s" */
    const char* precision;  /* "bf16", ... ; "" for bandwidths */
    int dense;              /* 1: dense operands (always, for these probes) */
    double work;            /* operations or bytes of one timed run */
    double seconds;         /* best time of one run */
    int m, n, k;            /* GEMM shape, else 0 */
    const char* detail;     /* "cublasLt algorithm 2 of 8 (heuristic rank), workspace 64 MiB", ... */
    const char* skipped;    /* why it did not run, or NULL */
};

typedef void (*InferbenchProbeSink)(void* context, const struct InferbenchProbeMeasurement* measurement);

/* Every function returns 0 on success, else writes a one-line reason into error (error_size bytes). */
int inferbench_probe_api_version(void);
int inferbench_probe_device_count(int* count, char* error, size_t error_size);
int inferbench_probe_device_info(int index, struct InferbenchProbeDevice* out, char* error, size_t error_size);
int inferbench_probe_run(const struct InferbenchProbeRequest* request, InferbenchProbeSink sink, void* context,
                         char* error, size_t error_size);

#ifdef __cplusplus
}
#endif

#endif
