// The precision-typed ONNX file TensorRT 11 builds from (it removed the precision builder flags: a strongly
// typed network runs in the types its file declares). SDK-free, shared by the tensorrt library backend and the
// trtexec backend: fp32 is the model as it is; fp16 and bf16 are inferbench's float conversion
// (models/onnx_fp16, graph inputs and outputs kept float32); int8 and fp8 are Q/DQ quantization
// (models/onnx_qdq) with activation ranges calibrated on a float32 reference run of the model over the
// calibration batches (TensorRT's calibration_dir files or the seeded random inputs). Converted files are
// cached by the source model's hash and every setting (models/converted_model_cache). A model the user already
// typed (float16/bfloat16 tensors or Q/DQ nodes) is used as it is, after its types are checked against the
// plan's precision: one line when they disagree, never a silent build in another precision.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backends/backend.hpp"
#include "core/spec.hpp"

namespace inferbench {

struct TypedOnnxRequest {
    std::filesystem::path model;  // the plan's ONNX file
    Precision precision = Precision::fp32;
    std::int64_t batch_size = 1;  // the calibration batches' batch where the model's batch is dynamic
    std::uint64_t seed = 0;       // seeded random calibration batches (no calibration_dir)
    std::string calibration_dir;  // int8/fp8: raw input batches (*.bin, tensorrt_calibration_data); empty: seeded
    std::string model_cache_dir;  // converted files go to <model_cache_dir>/converted
    bool random_calibration() const { return calibration_dir.empty(); }
};

// Where the file to build comes from.
enum class TypedOnnxOrigin {
    as_given,    // fp32: the model itself
    user_typed,  // the user's file already carries the precision (checked)
    converted,   // made by inferbench (and cached)
};

struct TypedOnnx {
    std::filesystem::path path;  // the file to parse, strongly typed
    TypedOnnxOrigin origin = TypedOnnxOrigin::as_given;
    std::string description;  // one line for the log: what the file is and where it came from
    // Figures measured when the file was made (int8/fp8: its agreement with float32 on the calibration batches).
    std::vector<BackendMetric> metrics;
};

// The float32 model run that an int8 or fp8 calibration reads activations from. The tensorrt backend
// implements it with an fp32 TensorRT engine; a caller without one passes nullptr and int8/fp8 are refused
// (typed_onnx_problem says so before anything runs).
class Fp32Reference {
public:
    virtual ~Fp32Reference() = default;
    // What the calibration cache key says of the reference ("TensorRT 10.8.0 fp32 on NVIDIA H100").
    virtual std::string identity() const = 0;
    // Runs `model` (a float32 ONNX file) on one batch, one tensor per model input in the model's order,
    // and returns each of `outputs` as float32 values (empty for an output that is not float32).
    virtual std::vector<std::vector<float>> run(const std::filesystem::path& model, std::span<const HostTensor> batch,
                                                std::span<const std::string> outputs) = 0;
};

// Why `request`'s precision cannot be expressed as a typed ONNX file here, judged without converting anything
// (so that `run --dry-run` and the run skip the same cells): int4 (not made by inferbench), int8/fp8 without a
// float32 reference, a user-typed file whose types disagree with the precision. Nothing when it can.
// The GPU's part (fp8 needs compute capability 8.9) is plan_precision's (tensorrt_platform.hpp).
std::optional<std::string> typed_onnx_problem(const TypedOnnxRequest& request, bool have_reference);

// The part of typed_onnx_problem that is bad input rather than a limit of this machine: a user-typed file whose
// types disagree with the plan's precision (one line naming the file, both precisions and the fix). A caller
// fails the cell on it; the other problems skip it.
std::optional<std::string> typed_onnx_mismatch(const TypedOnnxRequest& request);

// The file to build strongly typed. Throws UserError (one line naming the file and the plan's precision) for a
// user-typed file that disagrees with the precision or bad calibration data, EnvironmentError when the cache
// cannot be written; `reference` is needed for int8 and fp8 only.
TypedOnnx typed_onnx_for(const TypedOnnxRequest& request, Fp32Reference* reference);

}  // namespace inferbench
