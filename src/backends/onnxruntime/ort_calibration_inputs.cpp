#include "backends/onnxruntime/ort_calibration_inputs.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/batch_shape.hpp"
#include "backends/npy_file.hpp"
#include "backends/random_inputs.hpp"
#include "core/error.hpp"
#include "core/file_hash.hpp"
#include "models/onnx_reader.hpp"

namespace inferbench {
namespace {

namespace fs = std::filesystem;
using models::onnx::DataType;

std::optional<DType> dtype_of(DataType type) {
    switch (type) {
        case DataType::float32: return DType::f32;
        case DataType::float16: return DType::f16;
        case DataType::bfloat16: return DType::bf16;
        case DataType::float64: return DType::f64;
        case DataType::int8: return DType::i8;
        case DataType::uint8: return DType::u8;
        case DataType::int32: return DType::i32;
        case DataType::int64: return DType::i64;
        case DataType::boolean: return DType::boolean;
        default: return std::nullopt;
    }
}

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

// NAME.npy, or NAME_0.npy, NAME_1.npy, ... up to the first missing index.
std::vector<fs::path> files_of(const fs::path& dir, const std::string& name) {
    std::error_code ec;
    if (fs::is_regular_file(dir / (name + ".npy"), ec)) return {dir / (name + ".npy")};
    std::vector<fs::path> files;
    for (std::size_t k = 0;; ++k) {
        const fs::path file = dir / fmt::format("{}_{}.npy", name, k);
        if (!fs::is_regular_file(file, ec)) break;
        files.push_back(file);
    }
    return files;
}

HostTensor read_batch(const fs::path& model, const DeclaredInput& in, const fs::path& file) {
    HostTensor t = read_npy_file(file, in.name);
    if (t.info.dtype != in.dtype)
        throw UserError(fmt::format("{}: holds {} but input {} of {} takes {}; save it as that type", file.string(),
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
                                    file.string(), fmt::join(t.info.shape, ", "), in.name, model.filename().string(),
                                    fmt::join(in.shape.dims, ", ")));
    return t;
}

CalibrationInputs folder_batches(const fs::path& model, const std::vector<DeclaredInput>& inputs, const fs::path& dir) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw UserError(fmt::format("calibration_data {}: not a folder; give a folder of .npy files, one per input "
                                    "(NAME.npy or NAME_0.npy, NAME_1.npy, ...)",
                                    dir.string()));
    std::vector<std::vector<fs::path>> files;
    for (const auto& in : inputs) {
        files.push_back(files_of(dir, in.name));
        if (files.back().empty())
            throw UserError(fmt::format("calibration_data {}: no {}.npy or {}_0.npy for input {} of {}", dir.string(),
                                        in.name, in.name, in.name, model.filename().string()));
        if (files.back().size() != files.front().size())
            throw UserError(fmt::format("calibration_data {}: input {} has {} batches, input {} has {}; give each "
                                        "input the same number",
                                        dir.string(), inputs.front().name, files.front().size(), in.name,
                                        files.back().size()));
    }
    CalibrationInputs result;
    result.identity = fmt::format("folder {}", dir.string());
    for (std::size_t b = 0; b < files.front().size(); ++b) {
        auto& batch = result.batches.emplace_back();
        for (std::size_t i = 0; i < inputs.size(); ++i) {
            batch.push_back(read_batch(model, inputs[i], files[i][b]));
            result.identity += fmt::format(" {}={:016x}", files[i][b].filename().string(), hash_file_contents(files[i][b]));
        }
    }
    return result;
}

}  // namespace

CalibrationInputs calibration_inputs(const fs::path& model, std::uint64_t seed, const OrtPrecisionOptions& options) {
    const std::vector<DeclaredInput> inputs = declared_inputs(model);
    if (!options.calibration_data.empty()) return folder_batches(model, inputs, options.calibration_data);
    return random_batches(model, inputs, seed, options.calibration_batches);
}

}  // namespace inferbench
