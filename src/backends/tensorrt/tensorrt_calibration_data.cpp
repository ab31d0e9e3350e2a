#include "backends/tensorrt/tensorrt_calibration_data.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/tensorrt/tensorrt_engine_cache.hpp"
#include "core/error.hpp"
#include "core/fnv1a.hpp"
#include "core/splitmix64.hpp"

namespace inferbench {
namespace {

template <typename T>
void put(std::vector<std::byte>& out, std::size_t index, T value) {
    std::memcpy(out.data() + index * sizeof(T), &value, sizeof(T));
}

void put_random(std::vector<std::byte>& out, DType dtype, std::size_t index, std::uint64_t bits) {
    const auto small_int = static_cast<std::int64_t>(bits % 100);
    switch (dtype) {
        case DType::f32: put(out, index, signed_unit_float(bits)); break;
        case DType::f64: put(out, index, static_cast<double>(signed_unit_float(bits))); break;
        case DType::f16: put(out, index, float_to_half(signed_unit_float(bits))); break;
        case DType::bf16: put(out, index, float_to_bfloat16(signed_unit_float(bits))); break;
        case DType::i8: put(out, index, static_cast<std::int8_t>(small_int)); break;
        case DType::u8: put(out, index, static_cast<std::uint8_t>(small_int)); break;
        case DType::i32: put(out, index, static_cast<std::int32_t>(small_int)); break;
        case DType::i64: put(out, index, small_int); break;
        case DType::boolean: put(out, index, static_cast<std::uint8_t>(bits & 1U)); break;
    }
}

std::vector<std::byte> read_exactly(const std::filesystem::path& path, std::size_t bytes) {
    std::vector<std::byte> data(bytes);
    std::ifstream in(path, std::ios::binary);
    if (!in.read(reinterpret_cast<char*>(data.data()), static_cast<std::streamsize>(bytes)))
        throw std::runtime_error(fmt::format("cannot read {} bytes of calibration data from {}", bytes, path.string()));
    return data;
}

}  // namespace

CalibrationData CalibrationData::random(std::vector<TensorInfo> inputs, std::uint64_t seed, std::size_t batches) {
    CalibrationData data;
    data.inputs_ = std::move(inputs);
    data.batches_ = batches;
    data.seed_ = seed;
    return data;
}

CalibrationData CalibrationData::from_dir(std::vector<TensorInfo> inputs, const std::filesystem::path& dir) {
    CalibrationData data;
    data.files_ = calibration_files(dir);
    data.inputs_ = std::move(inputs);
    const std::size_t per_batch = data.inputs_.size();
    if (per_batch == 0 || data.files_.size() % per_batch != 0)
        throw UserError(fmt::format("tensorrt calibration_dir {}: {} .bin files for a model with {} inputs; give one "
                                    "file per input per batch ({} files per batch, in input order)",
                                    dir.string(), data.files_.size(), per_batch, per_batch));
    for (std::size_t i = 0; i < data.files_.size(); ++i) {
        const TensorInfo& input = data.inputs_[i % per_batch];
        std::error_code ec;
        const auto size = std::filesystem::file_size(data.files_[i], ec);
        if (ec || size != input.byte_size())
            throw UserError(fmt::format("tensorrt calibration file {} holds {} bytes; input {} needs {} ({} of shape [{}])",
                                        data.files_[i].string(), ec ? 0 : size, input.name, input.byte_size(),
                                        to_string(input.dtype), fmt::join(input.shape, ",")));
    }
    data.batches_ = data.files_.size() / per_batch;
    return data;
}

std::vector<HostTensor> CalibrationData::batch(std::size_t index) const {
    if (index >= batches_) throw std::out_of_range(fmt::format("calibration batch {} of {}", index, batches_));
    std::vector<HostTensor> tensors;
    tensors.reserve(inputs_.size());
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
        const TensorInfo& info = inputs_[i];
        if (files_.empty()) {
            // One stream per (batch, input), spread over the seed space so that seeds s and s + 1 share none.
            const std::uint64_t stream = index * inputs_.size() + i + 1;
            tensors.push_back({info, random_tensor_bytes(info, seed_ ^ (stream * 0x9e3779b97f4a7c15ULL))});
        } else {
            tensors.push_back({info, read_exactly(files_[index * inputs_.size() + i], info.byte_size())});
        }
    }
    return tensors;
}

std::vector<std::filesystem::path> calibration_files(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw UserError(fmt::format("tensorrt option calibration_dir: {} is not a folder", dir.string()));
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.is_regular_file() && entry.path().extension() == ".bin") files.push_back(entry.path());
    }
    if (files.empty())
        throw UserError(fmt::format("tensorrt option calibration_dir: {} holds no .bin files (raw input batches)",
                                    dir.string()));
    std::sort(files.begin(), files.end());
    return files;
}

std::string calibration_identity(const std::string& dir, std::uint64_t seed) {
    if (dir.empty()) return fmt::format("random seed={} batches={}", seed, kRandomCalibrationBatches);
    const std::vector<std::filesystem::path> files = calibration_files(dir);
    std::uint64_t digest = kFnv1aOffsetBasis;
    for (const auto& file : files) {
        std::error_code ec;
        const auto size = std::filesystem::file_size(file, ec);
        const auto modified = std::filesystem::last_write_time(file, ec).time_since_epoch().count();
        const std::string entry = fmt::format("{}\t{}\t{}\n", file.filename().string(), size, modified);
        digest = fnv1a64(entry, digest);
    }
    return fmt::format("dir={} files={} listing={}", std::filesystem::absolute(dir).string(), files.size(), hex64(digest));
}

std::vector<std::byte> random_tensor_bytes(const TensorInfo& info, std::uint64_t seed) {
    std::vector<std::byte> bytes(info.byte_size());
    const auto count = static_cast<std::size_t>(info.element_count());
    std::uint64_t state = seed;
    for (std::size_t i = 0; i < count; ++i) put_random(bytes, info.dtype, i, splitmix64(state));
    return bytes;
}

std::uint16_t float_to_half(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const auto sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000U);
    const int exponent = static_cast<int>((bits >> 23) & 0xffU) - 127;
    if (exponent < -14) return sign;                                 // zero, or flushed subnormal
    if (exponent > 15) return static_cast<std::uint16_t>(sign | 0x7c00U);  // infinity (NaN too)
    std::uint32_t mantissa = (bits & 0x7fffffU) >> 13;
    const std::uint32_t rest = bits & 0x1fffU;
    auto biased = static_cast<std::uint32_t>(exponent + 15);
    if (rest > 0x1000U || (rest == 0x1000U && (mantissa & 1U) != 0)) {
        if (++mantissa == 0x400U) {
            mantissa = 0;
            ++biased;  // 31 is infinity, which is the right rounding of a value this large
        }
    }
    return static_cast<std::uint16_t>(sign | (biased << 10) | mantissa);
}

std::uint16_t float_to_bfloat16(float value) {
    const auto bits = std::bit_cast<std::uint32_t>(value);
    const std::uint32_t rounding = 0x7fffU + ((bits >> 16) & 1U);
    return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

}  // namespace inferbench
