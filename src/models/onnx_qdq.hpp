// Static int8 quantization of an ONNX model in the QDQ format (QuantizeLinear/DequantizeLinear pairs that
// ONNX Runtime fuses into integer kernels and TensorRT reads as its explicit quantization): Conv, MatMul and
// Gemm of the main graph get int8 weights (symmetric, per output channel or per tensor), int32 biases
// (scale input scale x weight scale; or float32 biases, QdqSettings::quantize_bias), and calibrated per-tensor
// activations on their inputs and on the outputs that other nodes read. The ranges come from a calibration run
// (quant_calibration.hpp); the model is rewritten at the wire level (onnx_wire.hpp), tensors kept in external files
// written inline.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "models/onnx_reader.hpp"
#include "models/quant_calibration.hpp"

namespace inferbench::models::onnx {

// The first opset whose QuantizeLinear/DequantizeLinear take FP8 (float8e4m3fn).
inline constexpr std::int64_t kFloat8QdqOpset = 19;

// The element type of the quantized values of an activation type (int8, uint8, float8e4m3fn).
DataType quantized_type(quant::ActivationType type);

struct QdqSettings {
    bool per_channel = true;
    quant::ActivationType activation = quant::ActivationType::int8;
    // Biases as int32 behind a DequantizeLinear (what ONNX Runtime's CPU provider fuses into integer kernels), or
    // left float32 (what its CUDA provider can run: it has no int32 DequantizeLinear, so such a bias would run on
    // the CPU, and TensorRT quantizes biases itself).
    bool quantize_bias = true;
    // Weights in [-127, 127], or [-64, 64] for x86 CPUs without VNNI (quant::WeightRange says why). FP8
    // activations (TensorRT's FP8) get FP8 weights scaled to +-448 and float biases, whatever quantize_bias says.
    quant::WeightRange weight_range = quant::WeightRange::full;
};

// The float activations a QDQ quantization of `model` needs ranges for, graph inputs included, in graph order.
std::vector<std::string> qdq_activations(const OnnxModel& model);

// The model with `names` added as float32 graph outputs (rank unknown), tensors kept in external files
// written inline: what a calibration run reads the activations from.
std::string with_extra_outputs(const std::filesystem::path& model, std::span<const std::string> names);

// The QDQ model. `activations` holds the parameters of (a subset of) qdq_activations(); an activation
// without parameters stays float. Throws UserError naming the file for a model it cannot read, or one
// below opset 13 when per-channel weights are asked for (QuantizeLinear takes an axis from 13 on), or below
// kFloat8QdqOpset for FP8.
std::string quantize_to_qdq(const std::filesystem::path& model,
                            const std::map<std::string, quant::QuantParams, std::less<>>& activations,
                            const QdqSettings& settings);

}  // namespace inferbench::models::onnx
