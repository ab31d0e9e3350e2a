// A stand-in libcuda.so.1 for the end-to-end tests: exactly the driver functions runner/worker/cuda_conditions
// opens, with cuda.h's signatures, for one GPU with a 50 MiB L2 and a primary context that only keeps its
// flags. Each call appends its name to the file FAKE_CUDA_LOG names (when set), so a test can count the
// L2 flushes a worker made; FAKE_CUDA_FAIL=NAME makes that call answer error 2 (out of memory).
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

unsigned g_flags = 0;
int g_active = 0;
unsigned char g_buffer[16];

int answer(const char* call) {
    if (const char* path = std::getenv("FAKE_CUDA_LOG"); path && *path) {
        if (FILE* log = std::fopen(path, "a")) {
            std::fprintf(log, "%s\n", call);
            std::fclose(log);
        }
    }
    const char* fail = std::getenv("FAKE_CUDA_FAIL");
    return fail && std::strcmp(fail, call) == 0 ? 2 : 0;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuInit(unsigned) { return answer("cuInit"); }
__attribute__((visibility("default"))) int cuDeviceGet(int* device, int ordinal) {
    *device = ordinal;
    return ordinal == 0 ? answer("cuDeviceGet") : 101;  // CUDA_ERROR_INVALID_DEVICE
}
__attribute__((visibility("default"))) int cuDeviceGetAttribute(int* value, int attribute, int) {
    *value = attribute == 38 ? 50 * 1024 * 1024 : 0;
    return answer("cuDeviceGetAttribute");
}
__attribute__((visibility("default"))) int cuDevicePrimaryCtxRetain(void** context, int) {
    *context = g_buffer;
    g_active = 1;
    return answer("cuDevicePrimaryCtxRetain");
}
__attribute__((visibility("default"))) int cuDevicePrimaryCtxRelease_v2(int) { return answer("cuDevicePrimaryCtxRelease"); }
__attribute__((visibility("default"))) int cuDevicePrimaryCtxSetFlags_v2(int, unsigned flags) {
    g_flags = flags;
    return answer("cuDevicePrimaryCtxSetFlags");
}
__attribute__((visibility("default"))) int cuDevicePrimaryCtxGetState(int, unsigned* flags, int* active) {
    *flags = g_flags;
    *active = g_active;
    return answer("cuDevicePrimaryCtxGetState");
}
__attribute__((visibility("default"))) int cuCtxPushCurrent_v2(void*) { return answer("cuCtxPushCurrent"); }
__attribute__((visibility("default"))) int cuCtxPopCurrent_v2(void**) { return answer("cuCtxPopCurrent"); }
__attribute__((visibility("default"))) int cuCtxSynchronize() { return answer("cuCtxSynchronize"); }
__attribute__((visibility("default"))) int cuMemAlloc_v2(unsigned long long* pointer, std::size_t) {
    *pointer = 0x1000;
    return answer("cuMemAlloc");
}
__attribute__((visibility("default"))) int cuMemFree_v2(unsigned long long) { return answer("cuMemFree"); }
__attribute__((visibility("default"))) int cuMemsetD8Async(unsigned long long, unsigned char, std::size_t, void*) {
    return answer("cuMemsetD8Async");
}
__attribute__((visibility("default"))) int cuGetErrorString(int error, const char** text) {
    *text = error == 2 ? "out of memory" : "invalid device ordinal";
    return 0;
}

}  // extern "C"
