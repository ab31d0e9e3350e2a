#include "backends/tensorrt/tensorrt_platform.hpp"

#include <fmt/format.h>

namespace inferbench {
namespace {

std::string unsupported(const PrecisionRequest& r, std::string_view needs) {
    return fmt::format("tensorrt {} is not available on {} (compute capability {}.{}) with TensorRT {}: it needs {}",
                       to_string(r.precision), r.gpu_name, r.compute_capability.major, r.compute_capability.minor,
                       to_string(r.tensorrt), needs);
}

PrecisionPlan plan_int8(const PrecisionRequest& r, const PlatformSupport& s) {
    PrecisionPlan plan;
    if (!s.fast_int8) {
        plan.unsupported = unsupported(r, "fast int8 (compute capability 6.1, or 7.0 and newer)");
        return plan;
    }
    if (precision_route(r.tensorrt) == PrecisionRoute::builder_flags) {
        // Implicit quantization, as trtexec --int8: layers without int8 kernels fall back to fp32.
        plan.flags = {BuildFlag::int8};
        plan.needs_calibrator = true;
    }
    if (r.random_calibration)
        plan.caveat = "int8 is calibrated on seeded random data: the engine is valid and its speed is real, but "
                      "its accuracy is meaningless; set backend_options.tensorrt.calibration_dir to real input "
                      "batches for an engine worth checking";
    return plan;
}

PrecisionPlan plan_fp8(const PrecisionRequest& r, const PlatformSupport& s) {
    PrecisionPlan plan;
    if (!s.fp8) {
        plan.unsupported = unsupported(r, "FP8 (compute capability 8.9 or newer and TensorRT 8.6 or newer)");
        return plan;
    }
    if (precision_route(r.tensorrt) == PrecisionRoute::typed_onnx) {
        plan.caveat = "the FP8 Q/DQ file quantizes the inputs and weights of Conv, MatMul and Gemm; every other layer "
                      "runs in float32, as the file types it";
        return plan;
    }
    // TensorRT has no implicit FP8 quantization: only layers between FP8 Q/DQ nodes of the model run in
    // FP8. fp16 is allowed for the rest, so an unquantized model gives an fp16 engine.
    plan.flags = {BuildFlag::fp8, BuildFlag::fp16};
    plan.caveat = "TensorRT runs FP8 only in layers the model quantizes explicitly (FP8 QuantizeLinear/"
                  "DequantizeLinear nodes); every other layer runs in fp16, so an unquantized model measures fp16";
    return plan;
}

}  // namespace

PlatformSupport platform_support(ComputeCapability cc, const TensorRtVersion& tensorrt) {
    const int sm = cc.value();
    const bool trt_9 = tensorrt.major >= 9;
    const bool trt_8_6 = tensorrt.major > 8 || (tensorrt.major == 8 && tensorrt.minor >= 6);
    PlatformSupport s;
    s.fast_fp16 = sm == 53 || sm == 60 || sm == 62 || sm >= 70;
    s.fast_int8 = sm == 61 || sm >= 70;
    s.tf32 = sm >= 80;
    s.bf16 = sm >= 80 && trt_9;
    s.fp8 = sm >= 89 && trt_8_6;
    return s;
}

std::string_view to_string(BuildFlag flag) {
    switch (flag) {
        case BuildFlag::fp16: return "fp16";
        case BuildFlag::bf16: return "bf16";
        case BuildFlag::int8: return "int8";
        case BuildFlag::fp8: return "fp8";
        case BuildFlag::tf32: return "tf32";
    }
    return "?";
}

std::string to_string(const BuildFlags& flags) {
    std::string text;
    for (BuildFlag f : kAllBuildFlags) {
        if (flags.has(f)) text += fmt::format("{}{}", text.empty() ? "" : "+", to_string(f));
    }
    return text.empty() ? "none" : text;
}

namespace {

PrecisionPlan plan_for_hardware(const PrecisionRequest& r) {
    const PlatformSupport s = platform_support(r.compute_capability, r.tensorrt);
    const bool flags = precision_route(r.tensorrt) == PrecisionRoute::builder_flags;
    PrecisionPlan plan;
    switch (r.precision) {
        case Precision::fp32: return plan;
        case Precision::fp16:
            if (!s.fast_fp16) plan.unsupported = unsupported(r, "fast fp16 (compute capability 5.3, 6.0, 6.2, 7.0+)");
            else if (flags) plan.flags = {BuildFlag::fp16};
            return plan;
        case Precision::bf16:
            if (!s.bf16) plan.unsupported = unsupported(r, "bf16 (compute capability 8.0 or newer and TensorRT 9 or newer)");
            else if (flags) plan.flags = {BuildFlag::bf16};
            return plan;
        case Precision::int8: return plan_int8(r, s);
        case Precision::fp8: return plan_fp8(r, s);
        case Precision::int4:
            plan.unsupported = "int4 (the harness builds TensorRT engines from fp32, fp16, bf16, fp8 or int8 only)";
            return plan;
    }
    return plan;
}

}  // namespace

PrecisionPlan plan_precision(const PrecisionRequest& r) {
    PrecisionPlan plan;
    if (const auto problem = unknown_version_problem(r.tensorrt, "libnvinfer")) {
        plan.unsupported = *problem;
        return plan;
    }
    plan = plan_for_hardware(r);
    plan.route = precision_route(r.tensorrt);
    return plan;
}

}  // namespace inferbench
