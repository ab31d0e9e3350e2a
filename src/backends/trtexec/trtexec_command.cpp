#include "backends/trtexec/trtexec_command.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

#include "backends/batch_shape.hpp"
#include "backends/trtexec/trtexec_version.hpp"
#include "core/error.hpp"
#include "core/time_units.hpp"
#include "core/units.hpp"

namespace inferbench::trtexec {
namespace {

// "12", "0.25": trtexec reads these with stof; no exponent, no trailing zeros.
std::string decimal(double value) {
    std::string text = fmt::format("{:.3f}", value);
    while (text.ends_with('0')) text.pop_back();
    if (text.ends_with('.')) text.pop_back();
    return text;
}

// trtexec splits a shape spec at ':'; a name holding one is quoted.
std::string shape_name(const std::string& name) {
    return name.find_first_of(":,") == std::string::npos ? name : "'" + name + "'";
}

// "image:/tmp/x/input0.bin,'ids:0':/tmp/x/input1.bin"
std::string load_inputs_spec(const std::vector<std::pair<std::string, std::string>>& files) {
    std::vector<std::string> specs;
    for (const auto& [name, file] : files) {
        if (file.find(',') != std::string::npos)
            throw std::invalid_argument(fmt::format(
                "trtexec's --loadInputs splits at ',', which the input file {} holds; set TMPDIR to a folder "
                "without one",
                file));
        specs.push_back(shape_name(name) + ":" + file);
    }
    return join(specs, ",");
}

// The --skipInference flag came with TensorRT 8.4; earlier versions called it --buildOnly.
bool before_8_4(const std::string& version) {
    const auto dot = version.find('.');
    const auto major = parse_int(std::string_view(version).substr(0, dot));
    if (!major || dot == std::string::npos) return false;
    const std::string_view rest = std::string_view(version).substr(dot + 1);
    const auto minor = parse_int(rest.substr(0, rest.find('.'))).value_or(0);
    return *major < 8 || (*major == 8 && minor < 4);
}

// TensorRT 11: the types are the file's (the backend says which file); only fp32's TF32 switch is still a flag.
void add_typed_precision(CommandLine& command, const EngineBuild& build) {
    if (auto removed = removed_flags_problem(build.extra_args, *parse_tensorrt_version(build.tensorrt_version)))
        throw UserError(*removed);
    if (build.precision == Precision::fp32) {
        command.argv.emplace_back("--noTF32");
        command.notes.emplace_back("fp32 is built with --noTF32: no TF32 tensor-core math");
    }
}

void add_precision(CommandLine& command, const EngineBuild& build) {
    if (strongly_typed_only(build.tensorrt_version)) {
        add_typed_precision(command, build);
        return;
    }
    switch (build.precision) {
        case Precision::fp32:
            command.argv.emplace_back("--noTF32");
            command.notes.emplace_back("fp32 is built with --noTF32: no TF32 tensor-core math");
            break;
        case Precision::fp16: command.argv.emplace_back("--fp16"); break;
        case Precision::bf16: command.argv.emplace_back("--bf16"); break;
        case Precision::fp8: command.argv.emplace_back("--fp8"); break;
        case Precision::int4:  // not in the backend's capabilities: refused before a command is made
            throw UserError("trtexec builds no int4 engines from an ONNX model; use fp32, fp16, bf16, fp8 or int8");
        case Precision::int8:
            command.argv.emplace_back("--int8");
            if (!has_flag(build.extra_args, "--calib")) {
                command.notes.emplace_back(
                    "int8 without a calibration cache: trtexec sets random dynamic ranges, so the speed is "
                    "representative but the outputs are not; give --calib=CACHE in backend_options.trtexec.extra_args");
            }
            break;
    }
}

// trtexec 11's run measures as trtexec 10's does: with the copies, without a CUDA graph unless asked for one.
void add_trtexec_11_run_defaults(std::vector<std::string>& argv, const std::vector<std::string>& extra_args) {
    if (!has_flag(extra_args, "--includeDataTransfers")) argv.emplace_back("--includeDataTransfers");
    if (!has_flag(extra_args, "--useCudaGraph") && !has_flag(extra_args, "--noCudaGraph"))
        argv.emplace_back("--noCudaGraph");
}

}  // namespace

bool strongly_typed_only(std::string_view tensorrt_version) {
    const auto version = parse_tensorrt_version(tensorrt_version);
    return version && precision_route(*version) == PrecisionRoute::typed_onnx;
}

bool has_flag(const std::vector<std::string>& args, std::string_view flag) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
        return arg == flag || (arg.starts_with(flag) && arg.size() > flag.size() && arg[flag.size()] == '=');
    });
}

std::string shapes_for_batch(const std::vector<OnnxInput>& inputs, std::int64_t batch_size, std::string_view model) {
    constexpr std::string_view kOwnShapes =
        "give every shape in backend_options.trtexec.extra_args (--minShapes, --optShapes, --maxShapes and --shapes)";
    bool dynamic = false;
    std::vector<std::string> specs;
    for (const OnnxInput& input : inputs) {
        const auto shape = resolve_batch_shape(input.dims, batch_size, model, input.name, kOwnShapes);
        if (shape.empty()) continue;  // a scalar has no shape to give
        dynamic = dynamic || has_dynamic_batch(input.dims);
        std::vector<std::string> dims;
        for (const std::int64_t d : shape) dims.push_back(std::to_string(d));
        specs.push_back(shape_name(input.name) + ":" + join(dims, "x"));
    }
    return dynamic ? join(specs, ",") : std::string();
}

CommandLine engine_build_command(const EngineBuild& build) {
    CommandLine command;
    command.argv = {build.trtexec, "--onnx=" + build.onnx_path, "--saveEngine=" + build.engine_path};
    add_precision(command, build);
    const bool own_shapes = has_flag(build.extra_args, "--minShapes") || has_flag(build.extra_args, "--optShapes");
    if (!own_shapes) {
        const std::string shapes = shapes_for_batch(build.inputs, build.batch_size, build.onnx_path);
        if (!shapes.empty()) {
            for (const char* flag : {"--minShapes=", "--optShapes=", "--maxShapes="})
                command.argv.push_back(flag + shapes);
        }
    }
    command.argv.push_back("--timingCacheFile=" + build.timing_cache_path);
    command.argv.push_back(fmt::format("--device={}", build.device));
    // Building only: trtexec would otherwise measure the new engine for 3 s, for nothing.
    command.argv.emplace_back(before_8_4(build.tensorrt_version) ? "--buildOnly" : "--skipInference");
    command.argv.insert(command.argv.end(), build.extra_args.begin(), build.extra_args.end());
    return command;
}

std::vector<std::string> engine_run_command(const EngineRun& run) {
    std::vector<std::string> argv = {
        run.trtexec,
        "--loadEngine=" + run.engine_path,
        "--warmUp=" + decimal(ns_to_ms(run.warmup_ns)),
        "--duration=" + decimal(ns_to_s(run.duration_ns)),
        fmt::format("--iterations={}", std::max<std::int64_t>(run.iterations, 1)),
        "--exportTimes=" + run.export_times_path,
    };
    if (!run.shapes.empty() && !has_flag(run.extra_args, "--shapes")) argv.push_back("--shapes=" + run.shapes);
    if (!run.input_files.empty()) argv.push_back("--loadInputs=" + load_inputs_spec(run.input_files));
    argv.push_back(fmt::format("--device={}", run.device));
    if (strongly_typed_only(run.tensorrt_version)) {
        add_trtexec_11_run_defaults(argv, run.extra_args);
    } else {
        // Spinning instead of blocking on CUDA events: steadier latencies, as trtexec itself advises.
        argv.emplace_back("--useSpinWait");
    }
    argv.insert(argv.end(), run.extra_args.begin(), run.extra_args.end());
    return argv;
}

}  // namespace inferbench::trtexec
