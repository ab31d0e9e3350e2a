// The trtexec command lines the backend runs: one to build an engine from ONNX, one to measure it.
// Pure functions of their requests, so every flag is pinned by a unit test.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/spec.hpp"

namespace inferbench::trtexec {

// A graph input as the build command needs it (from models::onnx::read_onnx_signature).
struct OnnxInput {
    std::string name;
    std::int32_t elem_type = 0;      // onnx.TensorProto.DataType: 1 float, 10 float16, 7 int64, ...
    std::vector<std::int64_t> dims;  // -1 for a symbolic or unknown dimension
};

struct EngineBuild {
    std::string trtexec;  // the executable
    std::string onnx_path;  // TensorRT 11: the precision-typed file (backends/tensorrt/tensorrt_typed_onnx)
    std::string engine_path;
    std::string timing_cache_path;
    Precision precision = Precision::fp32;
    std::int64_t batch_size = 1;
    std::vector<OnnxInput> inputs;  // the model's, for the optimization profile
    int device = 0;
    // "8.2.1": before 8.4 trtexec says --buildOnly, after --skipInference; from 11 it builds strongly typed
    std::string tensorrt_version;
    std::vector<std::string> extra_args;
};

struct EngineRun {
    std::string trtexec;
    std::string engine_path;
    std::string export_times_path;
    std::int64_t warmup_ns = 0;
    std::int64_t duration_ns = 0;
    std::int64_t iterations = 1;  // trtexec runs at least this many and at least duration_ns
    std::string shapes;           // --shapes value; empty for an engine of fixed shapes
    int device = 0;
    std::vector<std::string> extra_args;
    // The plan's inputs as raw files, one per input: {input name, file}; empty: trtexec's own random inputs.
    std::vector<std::pair<std::string, std::string>> input_files;
    std::string tensorrt_version;  // from 11 trtexec's defaults changed (see engine_run_command)
};

struct CommandLine {
    std::vector<std::string> argv;   // argv[0] is the executable
    std::vector<std::string> notes;  // what the user should know about the numbers this gives
};

// trtexec --onnx=M --saveEngine=E <precision flags> [--minShapes/--optShapes/--maxShapes] --timingCacheFile=T
// --device=N --skipInference. fp32 adds --noTF32, so fp32 is fp32 and not TF32 on Ampere and newer.
// A dynamic-batch model gets one profile with min = opt = max = the batch: the engine is cached per batch.
// TensorRT 11 takes no precision flag: M is the precision-typed file and the build is strongly typed (always,
// so no --stronglyTyped either); extra_args holding a flag it removed is a UserError naming it.
CommandLine engine_build_command(const EngineBuild& build);

// trtexec --loadEngine=E --warmUp=MS --duration=S --iterations=N --exportTimes=F [--shapes=..]
// [--loadInputs=NAME:FILE,...] --device=N --useSpinWait. trtexec reads one file per input (raw bytes of the
// input's size) and feeds it to every iteration; a name holding ':' or ',' is quoted, as trtexec's help says.
// Throws std::invalid_argument for a file whose path holds ',', which trtexec would split there.
// TensorRT 11 changed three defaults; the run keeps measuring what 10 measured: --includeDataTransfers (11 skips
// the H2D/D2H copies unless asked) and --noCudaGraph (11 launches through a CUDA graph) unless extra_args asks
// for graphs, and no --useSpinWait (11 spins by default and warns that the flag is deprecated).
std::vector<std::string> engine_run_command(const EngineRun& run);

// True when `tensorrt_version` ("11.1.0") builds strongly typed only; false for older and unknown versions.
bool strongly_typed_only(std::string_view tensorrt_version);

// "input:8x3x224x224,mask:8x128": each input of `model` with its batch (first) dimension set to
// batch_size; empty when no batch is dynamic. The shapes follow backends/batch_shape.hpp, whose
// UserError also names extra_args as the way to give the shapes of other dynamic dimensions.
std::string shapes_for_batch(const std::vector<OnnxInput>& inputs, std::int64_t batch_size, std::string_view model);

// True when `args` hold the flag, as "--flag" or "--flag=...".
bool has_flag(const std::vector<std::string>& args, std::string_view flag);

}  // namespace inferbench::trtexec
