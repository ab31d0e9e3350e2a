// What a GPU and a TensorRT library can build, and which builder flags each inferbench precision needs.
// SDK-free: the backend maps BuildFlags onto nvinfer1::BuilderFlag, the tests check the choices here.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include "backends/tensorrt/tensorrt_version.hpp"
#include "core/spec.hpp"

namespace inferbench {

struct ComputeCapability {
    int major = 0;
    int minor = 0;

    int value() const { return major * 10 + minor; }  // 8.9 -> 89
    friend bool operator==(const ComputeCapability&, const ComputeCapability&) = default;
};

// TensorRT's own hardware table (IBuilder::platformHasFastFp16/Int8 answered from it; they are
// deprecated in TensorRT 10, and calling them needs a builder, i.e. a CUDA context in the process
// that only asks whether a cell can run).
struct PlatformSupport {
    bool fast_fp16 = false;  // sm 5.3, 6.0, 6.2, 7.0 and newer (not consumer Pascal, sm 6.1)
    bool fast_int8 = false;  // sm 6.1, 7.0 and newer (DP4A / tensor cores)
    bool tf32 = false;       // sm 8.0 and newer
    bool bf16 = false;       // sm 8.0 and newer with TensorRT 9 or newer (BuilderFlag::kBF16)
    bool fp8 = false;        // sm 8.9 and newer with TensorRT 8.6 or newer (BuilderFlag::kFP8)
};

PlatformSupport platform_support(ComputeCapability cc, const TensorRtVersion& tensorrt);

// The precision flags of a build; every flag not set is cleared on the builder config (TF32 included,
// so fp32 means IEEE fp32 and layers that fall back from a lower precision do too).
enum class BuildFlag : std::uint32_t { fp16 = 1U << 0, bf16 = 1U << 1, int8 = 1U << 2, fp8 = 1U << 3, tf32 = 1U << 4 };

inline constexpr BuildFlag kAllBuildFlags[] = {BuildFlag::fp16, BuildFlag::bf16, BuildFlag::int8, BuildFlag::fp8,
                                               BuildFlag::tf32};

class BuildFlags {
public:
    BuildFlags() = default;
    BuildFlags(std::initializer_list<BuildFlag> flags) {
        for (BuildFlag f : flags) bits_ |= static_cast<std::uint32_t>(f);
    }
    bool has(BuildFlag flag) const { return (bits_ & static_cast<std::uint32_t>(flag)) != 0; }
    std::uint32_t bits() const { return bits_; }
    friend bool operator==(const BuildFlags&, const BuildFlags&) = default;

private:
    std::uint32_t bits_ = 0;
};

std::string_view to_string(BuildFlag flag);
std::string to_string(const BuildFlags& flags);  // "fp16+int8", "none"

struct PrecisionPlan {
    PrecisionRoute route = PrecisionRoute::builder_flags;
    BuildFlags flags;                        // builder_flags only: typed_onnx builds with no precision flag
    bool needs_calibrator = false;           // implicit int8 quantization: an IInt8EntropyCalibrator2
    std::optional<std::string> unsupported;  // why this GPU and TensorRT cannot build the precision
    std::optional<std::string> caveat;       // what the measured numbers do not mean; printed at load
};

struct PrecisionRequest {
    Precision precision = Precision::fp32;
    std::string gpu_name;
    ComputeCapability compute_capability;
    TensorRtVersion tensorrt;
    bool random_calibration = true;  // int8 without a calibration_dir
};

// The precision's route follows the TensorRT version (precision_route): on 10.x and older the builder flags
// above; on 11.x no precision flag, the precision in a typed ONNX file (tensorrt_typed_onnx.hpp) and the same
// hardware rules. A TensorRT newer than known is unsupported for every precision, fp32 included.
PrecisionPlan plan_precision(const PrecisionRequest& request);

}  // namespace inferbench
