// TensorProto decoding: the data may sit in raw_data or in one of the typed repeated fields
// (float_data, int32_data, ...); either way it becomes little-endian bytes checked against the dims.
#include "models/onnx_tensor_reader.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace inferbench::models::onnx {

namespace detail {

namespace {

using pb::DecodeError;
using pb::ProtoReader;

// Field numbers, from onnx/onnx.proto.
struct TensorField {
    static constexpr std::uint32_t dims = 1, data_type = 2, float_data = 4, int32_data = 5, string_data = 6,
                                   int64_data = 7, name = 8, raw_data = 9, double_data = 10, uint64_data = 11,
                                   external_data = 13, data_location = 14;
};
constexpr std::uint32_t kEntryKey = 1, kEntryValue = 2;  // StringStringEntryProto
constexpr std::int32_t kDataLocationExternal = 1;        // TensorProto.DataLocation.EXTERNAL

// A TensorProto's data fields as read, before they become OnnxTensor::raw.
struct TensorFields {
    std::optional<std::span<const std::byte>> raw;
    std::vector<float> floats;
    std::vector<std::int32_t> int32s;
    std::vector<std::int64_t> int64s;
    std::vector<double> doubles;
    std::vector<std::uint64_t> uint64s;
    OnnxTensor::External external_data;
    bool external = false;
};

void append_le(std::vector<std::byte>& out, std::uint64_t value, std::size_t bytes) {
    for (std::size_t k = 0; k < bytes; ++k) out.push_back(static_cast<std::byte>((value >> (8U * k)) & 0xFFU));
}

// The bytes `count` elements of `type` take, or nullopt when the count overflows.
std::optional<std::size_t> byte_size(DataType type, std::int64_t count) {
    const auto bits = static_cast<std::uint64_t>(element_bits(type));
    const auto n = static_cast<std::uint64_t>(count);
    if (n > std::numeric_limits<std::uint64_t>::max() / 8 / std::max<std::uint64_t>(bits, 1)) return std::nullopt;
    return static_cast<std::size_t>((n * bits + 7) / 8);
}

// Converts the typed repeated field that holds `type` into little-endian raw bytes.
std::vector<std::byte> typed_to_raw(const TensorFields& f, DataType type) {
    const std::size_t width = element_bits(type) / 8;
    std::vector<std::byte> raw;
    const auto put_all = [&](const auto& values, std::size_t bytes) {
        raw.reserve(values.size() * bytes);  // bounded: each value came from the file
        for (const auto v : values) {
            if constexpr (std::is_same_v<std::decay_t<decltype(v)>, float>) {
                append_le(raw, std::bit_cast<std::uint32_t>(v), bytes);
            } else if constexpr (std::is_same_v<std::decay_t<decltype(v)>, double>) {
                append_le(raw, std::bit_cast<std::uint64_t>(v), bytes);
            } else {
                append_le(raw, static_cast<std::uint64_t>(v), bytes);
            }
        }
    };
    switch (type) {
        case DataType::float32:
        case DataType::complex64:
            put_all(f.floats, 4);
            break;
        case DataType::float64:
        case DataType::complex128:
            put_all(f.doubles, 8);
            break;
        case DataType::int64:
            put_all(f.int64s, 8);
            break;
        case DataType::uint32:
        case DataType::uint64:
            put_all(f.uint64s, width);
            break;
        default:  // 8- and 16-bit types, int32 and bool: one element per int32_data value
            put_all(f.int32s, width);
            break;
    }
    return raw;
}

bool has_typed_data(const TensorFields& f) {
    return !f.floats.empty() || !f.int32s.empty() || !f.int64s.empty() || !f.doubles.empty() || !f.uint64s.empty();
}

// One StringStringEntryProto of TensorProto.external_data: "location", "offset" or "length" (a
// "checksum" is not checked; other keys are ignored, as ONNX's own loader does).
void read_external_entry(ProtoReader entry, TensorFields& f) {
    std::string key;
    std::string value;
    while (entry.next_field()) {
        if (entry.field() == kEntryKey) {
            key = entry.read_string();
        } else if (entry.field() == kEntryValue) {
            value = entry.read_string();
        } else {
            entry.skip();
        }
    }
    const auto number = [&](std::int64_t& out) {
        const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
        if (ec != std::errc() || end != value.data() + value.size() || out < 0)
            throw Unsupported(fmt::format("external data {} '{}' is not a byte count", key, value));
    };
    if (key == "location") f.external_data.location = value;
    if (key == "offset") number(f.external_data.offset);
    if (key == "length") number(f.external_data.length);
    f.external = true;
}

void read_tensor_field(ProtoReader& r, OnnxTensor& t, TensorFields& f) {
    switch (r.field()) {
        case TensorField::dims:
            r.read_repeated(t.dims);
            break;
        case TensorField::data_type:
            t.data_type = static_cast<DataType>(r.read_int32());
            break;
        case TensorField::float_data:
            r.read_repeated(f.floats);
            break;
        case TensorField::int32_data:
            r.read_repeated(f.int32s);
            break;
        case TensorField::string_data:
            t.strings.push_back(r.read_string());
            break;
        case TensorField::int64_data:
            r.read_repeated(f.int64s);
            break;
        case TensorField::name:
            t.name = r.read_string();
            break;
        case TensorField::raw_data:
            f.raw = r.read_bytes();
            break;
        case TensorField::double_data:
            r.read_repeated(f.doubles);
            break;
        case TensorField::uint64_data:
            r.read_repeated(f.uint64s);
            break;
        case TensorField::external_data:
            read_external_entry(r.read_message(), f);
            break;
        case TensorField::data_location:
            if (r.read_int32() == kDataLocationExternal) f.external = true;
            break;
        default:
            r.skip();
    }
}

// Fills t.raw from whichever field holds the data and checks its size against the dims.
// `start`: where the TensorProto starts, for errors.
void finish_tensor(std::size_t start, OnnxTensor& t, const TensorFields& f) {
    const auto fail = [&](const std::string& what) { throw DecodeError(what, start); };
    const std::int64_t count = t.element_count();
    if (count < 0) fail(fmt::format("tensor '{}': invalid dims [{}]", t.name, fmt::join(t.dims, ", ")));
    if (f.external) {
        if (f.external_data.location.empty()) fail(fmt::format("tensor '{}': external data without a location", t.name));
        if (t.data_type == DataType::string || element_bits(t.data_type) == 0)
            throw Unsupported(fmt::format("tensor '{}': external {} data is not supported", t.name, to_string(t.data_type)));
        if (!byte_size(t.data_type, count)) fail(fmt::format("tensor '{}': invalid dims", t.name));
        t.external = f.external_data;
        return;
    }
    if (t.data_type == DataType::string) {
        if (static_cast<std::uint64_t>(count) != t.strings.size())
            fail(fmt::format("tensor '{}': {} strings for {} elements", t.name, t.strings.size(), count));
        return;
    }
    const bool sub_byte = element_bits(t.data_type) % 8 != 0;
    if (f.raw) {
        t.raw.assign(f.raw->begin(), f.raw->end());
    } else if (has_typed_data(f) && sub_byte) {
        throw Unsupported(
            fmt::format("tensor '{}': {} data outside raw_data is not supported", t.name, to_string(t.data_type)));
    } else if (has_typed_data(f)) {
        t.raw = typed_to_raw(f, t.data_type);
    }
    if (element_bits(t.data_type) == 0) return;  // unknown type: nothing to check against
    const auto expected = byte_size(t.data_type, count);
    if (!expected || *expected != t.raw.size()) {
        fail(fmt::format("tensor '{}': {} bytes of data for {} {} elements", t.name, t.raw.size(), count,
                         to_string(t.data_type)));
    }
}

}  // namespace

OnnxTensor parse_tensor(ProtoReader r) {
    const std::size_t start = r.offset();
    OnnxTensor t;
    TensorFields f;
    while (r.next_field()) read_tensor_field(r, t, f);
    finish_tensor(start, t, f);
    return t;
}

}  // namespace detail

std::string_view to_string(DataType type) {
    static constexpr std::string_view kNames[] = {
        "undefined",      "float32",    "uint8",          "int8",       "uint16",   "int16",
        "int32",          "int64",      "string",         "bool",       "float16",  "float64",
        "uint32",         "uint64",     "complex64",      "complex128", "bfloat16", "float8e4m3fn",
        "float8e4m3fnuz", "float8e5m2", "float8e5m2fnuz", "uint4",      "int4",     "float4e2m1"};
    const auto index = static_cast<std::size_t>(type);
    return index < std::size(kNames) ? kNames[index] : std::string_view("unknown type");
}

std::size_t element_bits(DataType type) {
    static constexpr std::size_t kBits[] = {0,  32, 8,  8,   16, 16, 32, 64, 0, 8, 16, 64,
                                            32, 64, 64, 128, 16, 8,  8,  8,  8, 4, 4,  4};
    const auto index = static_cast<std::size_t>(type);
    return index < std::size(kBits) ? kBits[index] : 0;
}

std::int64_t OnnxTensor::element_count() const {
    std::int64_t count = 1;
    for (const std::int64_t d : dims) {
        if (d < 0 || (d > 0 && count > std::numeric_limits<std::int64_t>::max() / d)) return -1;
        count *= d;
    }
    return count;
}

}  // namespace inferbench::models::onnx
