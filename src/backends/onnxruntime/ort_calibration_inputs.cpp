#include "backends/onnxruntime/ort_calibration_inputs.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/batch_shape.hpp"
#include "backends/input_files.hpp"
#include "backends/onnx_dtype.hpp"
#include "backends/random_inputs.hpp"
#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using models::onnx::DataType;


struct DeclaredInput {
    std::string name;
    DType dtype;
    DeclaredShape shape;
};

std::vector<DeclaredInput> declared_inputs(const fs::path& model) {
    std::vector<DeclaredInput> inputs;
    for (const auto& in : models::onnx::read_onnx_signature(model).inputs) {
        const auto dtype = dtype_of(in.elem_type);
        if (!dtype)
            throw UserError(fmt::format("input {} of model {} is of {}, which inferbench cannot feed", in.name,
                                        model.string(), to_string(in.elem_type)));
        DeclaredShape shape;
        for (const auto& d : in.dims) {
            const auto* size = std::get_if<std::int64_t>(&d);
            shape.dims.push_back(size ? *size : -1);
            shape.symbols.push_back(size ? std::string() : std::get<std::string>(d));
        }
        inputs.push_back({in.name, *dtype, std::move(shape)});
    }
    return inputs;
}

// 1 where every input's first dimension is dynamic (or absent); else the first fixed one.
std::int64_t calibration_batch(const std::vector<DeclaredInput>& inputs) {
    for (const auto& in : inputs)
        if (!in.shape.dims.empty() && in.shape.dims.front() > 0) return in.shape.dims.front();
    return 1;
}

CalibrationInputs random_batches(const fs::path& model, const std::vector<DeclaredInput>& inputs, std::uint64_t seed,
                                 std::int64_t count) {
    const std::int64_t batch = calibration_batch(inputs);
    std::vector<TensorInfo> infos;
    for (const auto& in : inputs)
        infos.push_back({in.name, in.dtype, resolve_batch_shape(in.shape, batch, model.string(), in.name)});
    CalibrationInputs result;
    for (std::int64_t k = 0; k < count; ++k)
        result.batches.push_back(make_random_inputs(infos, seed + static_cast<std::uint64_t>(k)));
    result.identity = fmt::format("random seed={} batches={} batch={}", seed, count, batch);
    return result;
}

// The array `source` holds for input `in`, at whatever batch the file has (its first dimension).
HostTensor fitted_batch(HostTensor t, const fs::path& model, const DeclaredInput& in, const std::string& source) {
    if (t.info.dtype != in.dtype)
        throw UserError(fmt::format("{}: holds {} but input {} of {} takes {}; save it as that type", source,
                                    to_string(t.info.dtype), in.name, model.filename().string(), to_string(in.dtype)));
    const std::int64_t batch = t.info.shape.empty() ? 1 : t.info.shape.front();
    std::vector<std::int64_t> expected;
    try {
        expected = resolve_batch_shape(in.shape, batch, model.string(), in.name);
    } catch (const UserError&) {
        expected.clear();
    }
    if (expected != t.info.shape)
        throw UserError(fmt::format("{}: shape [{}] does not fit input {} of {}, declared [{}] (the first dimension "
                                    "is the batch)",
                                    source, fmt::join(t.info.shape, ", "), in.name, model.filename().string(),
                                    fmt::join(in.shape.dims, ", ")));
    t.info.name = in.name;
    return t;
}

// What the converted-model cache key says of the files: their names and contents, so that editing one makes
// the int8 model anew.
std::string files_identity(const fs::path& path) {
    std::error_code ec;
    if (!fs::is_directory(path, ec)) return fmt::format("{}={:016x}", path.string(), hash_file_contents(path));
    std::vector<fs::path> files;
    for (const auto& entry : fs::recursive_directory_iterator(path))
        if (entry.is_regular_file()) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::string identity = path.string();
    for (const auto& file : files)
        identity += fmt::format(" {}={:016x}", fs::relative(file, path).string(), hash_file_contents(file));
    return identity;
}

// The user's files, in any layout the plan's inputs take (backends/input_files), each batch as its file has it.
CalibrationInputs file_batches(const fs::path& model, const std::vector<DeclaredInput>& inputs, const fs::path& path) {
    std::vector<std::string> names;
    for (const auto& in : inputs) names.push_back(in.name);
    const FitArray fit = [&](HostTensor array, std::size_t input, const std::string& source) {
        return fitted_batch(std::move(array), model, inputs[input], source);
    };
    CalibrationInputs result;
    result.batches = read_input_files(path, "calibration_data", names, fit);
    result.identity = "files " + files_identity(path);
    return result;
}

}  // namespace

CalibrationInputs calibration_inputs(const fs::path& model, std::uint64_t seed, const OrtPrecisionOptions& options) {
    const std::vector<DeclaredInput> inputs = declared_inputs(model);
    if (!options.calibration_data.empty()) return file_batches(model, inputs, options.calibration_data);
    return random_batches(model, inputs, seed, options.calibration_batches);
}

}  // namespace inferbench
