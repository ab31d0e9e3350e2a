// The part of NVML that inferbench calls, declared as nvml.h (NVML API version 12: CUDA 12 and 13
// drivers) declares it: NVML is opened at run time (dlopen), never linked, so the types, constants and
// signatures live here. The names are NVML's own, so that each line can be checked against nvml.h.
#pragma once

#include <cstdint>

namespace inferbench::telemetry::nvml_api {

using nvmlReturn_t = int;  // an enum in nvml.h: int-sized
using nvmlDevice_t = struct nvmlDevice_st*;

inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_DEVICE_UUID_V2_BUFFER_SIZE = 96;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;

// nvmlTemperatureSensors_t, nvmlClockType_t, nvmlPcieUtilCounter_t: enums, passed as int.
inline constexpr int NVML_TEMPERATURE_GPU = 0;
inline constexpr int NVML_CLOCK_GRAPHICS = 0;
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_CLOCK_MEM = 2;
inline constexpr int NVML_PCIE_UTIL_TX_BYTES = 0;
inline constexpr int NVML_PCIE_UTIL_RX_BYTES = 1;
inline constexpr int NVML_PSTATE_UNKNOWN = 32;  // nvmlPstates_t: 0..15, else unknown

// Field values (nvmlDeviceGetFieldValues); scopeId 0 is the GPU alone.
inline constexpr unsigned NVML_FI_DEV_MEMORY_TEMP = 82;
inline constexpr unsigned NVML_FI_DEV_POWER_AVERAGE = 185;  // 1 s average, Ampere (except GA100) and newer
inline constexpr unsigned NVML_FI_DEV_POWER_INSTANT = 186;  // every architecture with power readings

inline constexpr int NVML_VALUE_TYPE_DOUBLE = 0;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_INT = 1;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
inline constexpr int NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
inline constexpr int NVML_VALUE_TYPE_SIGNED_INT = 5;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_SHORT = 6;

// usedGpuMemory when the driver cannot tell (NVML_VALUE_NOT_AVAILABLE as unsigned long long).
inline constexpr unsigned long long NVML_VALUE_NOT_AVAILABLE_ULL = ~0ULL;

struct nvmlPciInfo_t {  // the v3 layout (nvmlDeviceGetPciInfo_v3)
    char busIdLegacy[16];
    unsigned int domain;
    unsigned int bus;
    unsigned int device;
    unsigned int pciDeviceId;  // device id << 16 | vendor id
    unsigned int pciSubSystemId;
    char busId[32];
};

struct nvmlUtilization_t {
    unsigned int gpu;     // % of the last sample period with a kernel running
    unsigned int memory;  // % of the last sample period with device memory read or written
};

struct nvmlMemory_t {  // v1, bytes
    unsigned long long total;
    unsigned long long free;
    unsigned long long used;
};

struct nvmlProcessInfo_t {  // nvmlProcessInfo_v2_t, the element of nvmlDeviceGetComputeRunningProcesses_v3
    unsigned int pid;
    unsigned long long usedGpuMemory;  // bytes
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
};

union nvmlValue_t {
    double dVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    int siVal;
    unsigned short usVal;
};

struct nvmlFieldValue_t {
    unsigned int fieldId;
    unsigned int scopeId;
    long long timestamp;    // us since 1970
    long long latencyUsec;
    int valueType;          // nvmlValueType_t
    nvmlReturn_t nvmlReturn;
    nvmlValue_t value;
};

// The signatures, as function pointer types of the symbols looked up with dlsym.
using InitFn = nvmlReturn_t (*)();
using ShutdownFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using SystemGetDriverVersionFn = nvmlReturn_t (*)(char*, unsigned int);
using DeviceGetCountFn = nvmlReturn_t (*)(unsigned int*);
using DeviceGetHandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using DeviceGetTextFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);  // GetName, GetUUID
using DeviceGetPciInfoFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*);
using DeviceGetUintFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // GetPowerUsage, GetEnforcedPowerLimit
using DeviceGetUllFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*);  // energy, clock-event reasons
using DeviceGetUintOfFn = nvmlReturn_t (*)(nvmlDevice_t, int, unsigned int*);  // temperature, clocks, PCIe
using DeviceGetIntFn = nvmlReturn_t (*)(nvmlDevice_t, int*);  // GetPerformanceState (nvmlPstates_t)
using DeviceGetUtilizationFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using DeviceGetMemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using DeviceGetProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, nvmlProcessInfo_t*);
using DeviceGetFieldValuesFn = nvmlReturn_t (*)(nvmlDevice_t, int, nvmlFieldValue_t*);
// nvmlDeviceGetCpuAffinity: the CPUs nearest the GPU, as cpuSetSize words of 64 CPUs each (bit n of word w: CPU 64w+n).
using DeviceGetCpuAffinityFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, unsigned long*);

}  // namespace inferbench::telemetry::nvml_api
