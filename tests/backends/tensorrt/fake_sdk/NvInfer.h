// NOT TensorRT. A fake NvInfer.h declaring only the parts of the TensorRT 10 and 11 C++ APIs that inferbench's
// tensorrt backend calls, with their names and signatures, so that the backend's SDK half is at least
// type-checked on machines without TensorRT. FAKE_TENSORRT_MAJOR (10 unless defined) picks the version: 11
// removes what NVIDIA's 10.x-to-11.x migration guide lists as removed (the precision builder flags kFP16, kINT8,
// kFP8, kBF16, the int8 calibrator API) and deprecates NetworkDefinitionCreationFlag::kSTRONGLY_TYPED (renumbered
// 0: strong typing is always on and the flag is ignored). Deprecations are marked as in TensorRT 10.1+ and 11.0,
// so that -Werror sees them. Defined only by the fake library of the tests (fake_nvinfer.cpp), never by NVIDIA.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#ifndef FAKE_TENSORRT_MAJOR
#define FAKE_TENSORRT_MAJOR 10
#endif
#define NV_TENSORRT_MAJOR FAKE_TENSORRT_MAJOR
#if FAKE_TENSORRT_MAJOR >= 11
#define NV_TENSORRT_MINOR 0
#define NV_TENSORRT_PATCH 0
#define NV_TENSORRT_BUILD 12
#else
#define NV_TENSORRT_MINOR 3
#define NV_TENSORRT_PATCH 0
#define NV_TENSORRT_BUILD 26
#endif
#define NV_TENSORRT_VERSION ((NV_TENSORRT_MAJOR * 10000L) + (NV_TENSORRT_MINOR * 100L) + NV_TENSORRT_PATCH)
#define TENSORRTAPI __attribute__((visibility("default")))
#define TRT_DEPRECATED __attribute__((deprecated))

extern "C" TENSORRTAPI void* createInferBuilder_INTERNAL(void* logger, int32_t version) noexcept;
extern "C" TENSORRTAPI void* createInferRuntime_INTERNAL(void* logger, int32_t version) noexcept;
extern "C" TENSORRTAPI int32_t getInferLibVersion() noexcept;

namespace nvinfer1 {

using AsciiChar = char;

class ILogger {
public:
    enum class Severity : int32_t { kINTERNAL_ERROR = 0, kERROR = 1, kWARNING = 2, kINFO = 3, kVERBOSE = 4 };
    virtual void log(Severity severity, AsciiChar const* msg) noexcept = 0;
    ILogger() = default;
    virtual ~ILogger() = default;

protected:
    ILogger(ILogger const&) = default;
    ILogger(ILogger&&) = default;
    ILogger& operator=(ILogger const&) & = default;
    ILogger& operator=(ILogger&&) & = default;
};

enum class DataType : int32_t {
    kFLOAT = 0, kHALF = 1, kINT8 = 2, kINT32 = 3, kBOOL = 4, kUINT8 = 5, kFP8 = 6, kBF16 = 7, kINT64 = 8, kINT4 = 9
};

class Dims64 {
public:
    static constexpr int32_t MAX_DIMS{8};
    int32_t nbDims;
    int64_t d[MAX_DIMS];
};
using Dims = Dims64;

enum class TensorIOMode : int32_t { kNONE = 0, kINPUT = 1, kOUTPUT = 2 };
enum class TensorLocation : int32_t { kDEVICE = 0, kHOST = 1 };
enum class OptProfileSelector : int32_t { kMIN = 0, kOPT = 1, kMAX = 2 };
enum class MemoryPoolType : int32_t {
    kWORKSPACE = 0, kDLA_MANAGED_SRAM = 1, kDLA_LOCAL_DRAM = 2, kDLA_GLOBAL_DRAM = 3, kTACTIC_DRAM = 4
};
#if FAKE_TENSORRT_MAJOR >= 11
enum class BuilderFlag : int32_t { kTF32 = 6 };
enum class NetworkDefinitionCreationFlag : int32_t { kSTRONGLY_TYPED TRT_DEPRECATED = 0 };
#else
enum class BuilderFlag : int32_t { kFP16 = 0, kINT8 = 1, kTF32 = 6, kFP8 = 15, kBF16 = 17 };
enum class NetworkDefinitionCreationFlag : int32_t { kEXPLICIT_BATCH TRT_DEPRECATED = 0, kSTRONGLY_TYPED = 1 };
#endif
using NetworkDefinitionCreationFlags = uint32_t;
enum class ExecutionContextAllocationStrategy : int32_t { kSTATIC = 0, kON_PROFILE_CHANGE = 1, kUSER_MANAGED = 2 };
enum class CalibrationAlgoType : int32_t {
    kLEGACY_CALIBRATION = 0, kENTROPY_CALIBRATION = 1, kENTROPY_CALIBRATION_2 = 2, kMINMAX_CALIBRATION = 3
};

class IHostMemory {
public:
    virtual ~IHostMemory() noexcept = default;
    void* data() const noexcept;
    std::size_t size() const noexcept;
    DataType type() const noexcept;
};

class ITensor {
public:
    char const* getName() const noexcept;
    Dims getDimensions() const noexcept;
    DataType getType() const noexcept;

protected:
    virtual ~ITensor() noexcept = default;
};

class INetworkDefinition {
public:
    virtual ~INetworkDefinition() noexcept = default;
    int32_t getNbInputs() const noexcept;
    ITensor* getInput(int32_t index) const noexcept;
};

class IOptimizationProfile {
public:
    bool setDimensions(char const* inputName, OptProfileSelector select, Dims const& dims) noexcept;

protected:
    virtual ~IOptimizationProfile() noexcept = default;
};

class ITimingCache {
public:
    virtual ~ITimingCache() noexcept = default;
    IHostMemory* serialize() const noexcept;
};

struct InterfaceInfo {
    char const* kind;
    int32_t major;
    int32_t minor;
};

class IVersionedInterface {
public:
    virtual InterfaceInfo getInterfaceInfo() const noexcept = 0;
    virtual ~IVersionedInterface() noexcept = default;
};

#if FAKE_TENSORRT_MAJOR < 11
class TRT_DEPRECATED IInt8Calibrator : public IVersionedInterface {
public:
    virtual int32_t getBatchSize() const noexcept = 0;
    virtual bool getBatch(void* bindings[], char const* names[], int32_t nbBindings) noexcept = 0;
    virtual void const* readCalibrationCache(std::size_t& length) noexcept = 0;
    virtual void writeCalibrationCache(void const* ptr, std::size_t length) noexcept = 0;
    virtual CalibrationAlgoType getAlgorithm() noexcept = 0;
    ~IInt8Calibrator() noexcept override = default;
};

class TRT_DEPRECATED IInt8EntropyCalibrator2 : public IInt8Calibrator {
public:
    InterfaceInfo getInterfaceInfo() const noexcept override { return InterfaceInfo{"IInt8EntropyCalibrator2", 1, 0}; }
    CalibrationAlgoType getAlgorithm() noexcept override { return CalibrationAlgoType::kENTROPY_CALIBRATION_2; }
    ~IInt8EntropyCalibrator2() noexcept override = default;
};
#endif

class IBuilderConfig {
public:
    virtual ~IBuilderConfig() noexcept = default;
    void setFlag(BuilderFlag builderFlag) noexcept;
    void clearFlag(BuilderFlag builderFlag) noexcept;
    void setMemoryPoolLimit(MemoryPoolType pool, std::size_t poolSize) noexcept;
    int32_t addOptimizationProfile(IOptimizationProfile const* profile) noexcept;
#if FAKE_TENSORRT_MAJOR < 11
    TRT_DEPRECATED void setInt8Calibrator(IInt8Calibrator* calibrator) noexcept;
    TRT_DEPRECATED bool setCalibrationProfile(IOptimizationProfile const* profile) noexcept;
#endif
    void setBuilderOptimizationLevel(int32_t level) noexcept;
    ITimingCache* createTimingCache(void const* blob, std::size_t size) const noexcept;
    bool setTimingCache(ITimingCache const& cache, bool ignoreMismatch) noexcept;
    ITimingCache const* getTimingCache() const noexcept;
};

class IBuilder {
public:
    virtual ~IBuilder() noexcept = default;
    IBuilderConfig* createBuilderConfig() noexcept;
    INetworkDefinition* createNetworkV2(NetworkDefinitionCreationFlags flags) noexcept;
    IOptimizationProfile* createOptimizationProfile() noexcept;
    IHostMemory* buildSerializedNetwork(INetworkDefinition& network, IBuilderConfig& config) noexcept;
};

class IExecutionContext {
public:
    virtual ~IExecutionContext() noexcept = default;
    bool setInputShape(char const* tensorName, Dims const& dims) noexcept;
    Dims getTensorShape(char const* tensorName) const noexcept;
    bool setTensorAddress(char const* tensorName, void* data) noexcept;
    bool allInputDimensionsSpecified() const noexcept;
    bool enqueueV3(cudaStream_t stream) noexcept;
};

class ICudaEngine {
public:
    virtual ~ICudaEngine() noexcept = default;
    int32_t getNbIOTensors() const noexcept;
    char const* getIOTensorName(int32_t index) const noexcept;
    TensorIOMode getTensorIOMode(char const* tensorName) const noexcept;
    DataType getTensorDataType(char const* tensorName) const noexcept;
    Dims getTensorShape(char const* tensorName) const noexcept;
    TensorLocation getTensorLocation(char const* tensorName) const noexcept;
    IExecutionContext* createExecutionContext(
        ExecutionContextAllocationStrategy strategy = ExecutionContextAllocationStrategy::kSTATIC) noexcept;
};

class IRuntime {
public:
    virtual ~IRuntime() noexcept = default;
    ICudaEngine* deserializeCudaEngine(void const* blob, std::size_t size) noexcept;
};

namespace {

inline IBuilder* createInferBuilder(ILogger& logger) noexcept {
    return static_cast<IBuilder*>(createInferBuilder_INTERNAL(&logger, NV_TENSORRT_VERSION));
}

inline IRuntime* createInferRuntime(ILogger& logger) noexcept {
    return static_cast<IRuntime*>(createInferRuntime_INTERNAL(&logger, NV_TENSORRT_VERSION));
}

}  // namespace

}  // namespace nvinfer1
