#include "models/protobuf_reader.hpp"

#include <bit>

#include <fmt/format.h>

namespace inferbench::models::pb {

namespace {

constexpr std::size_t kMaxVarintBytes = 10;
// Field numbers are 29 bits (https://protobuf.dev/programming-guides/proto3/#assigning).
constexpr std::uint64_t kMaxFieldNumber = (1U << 29U) - 1U;

std::string_view wire_type_name(WireType type) {
    switch (type) {
        case WireType::varint:
            return "varint";
        case WireType::fixed64:
            return "64-bit";
        case WireType::length_delimited:
            return "length-delimited";
        case WireType::fixed32:
            return "32-bit";
    }
    return "unknown";
}

}  // namespace

void ProtoReader::fail(const std::string& what) const { throw DecodeError(what, base_ + field_start_); }

std::uint64_t ProtoReader::raw_varint() {
    const std::size_t start = pos_;
    std::uint64_t value = 0;
    for (std::size_t k = 0; k < kMaxVarintBytes; ++k) {
        if (pos_ >= data_.size()) throw DecodeError("varint runs past the end of the data", base_ + start);
        const auto byte = std::to_integer<std::uint64_t>(data_[pos_++]);
        // The 10th byte holds bit 63 only; more would overflow 64 bits.
        if (k == kMaxVarintBytes - 1 && byte > 1U) {
            throw DecodeError("varint longer than 64 bits", base_ + start);
        }
        value |= (byte & 0x7FU) << (7U * k);
        if ((byte & 0x80U) == 0U) return value;
    }
    throw DecodeError("varint longer than 10 bytes", base_ + start);
}

std::uint32_t ProtoReader::raw_fixed32() {
    if (data_.size() - pos_ < 4) throw DecodeError("32-bit value runs past the end of the data", base_ + pos_);
    std::uint32_t value = 0;
    for (unsigned k = 0; k < 4; ++k) value |= std::to_integer<std::uint32_t>(data_[pos_++]) << (8U * k);
    return value;
}

std::uint64_t ProtoReader::raw_fixed64() {
    if (data_.size() - pos_ < 8) throw DecodeError("64-bit value runs past the end of the data", base_ + pos_);
    std::uint64_t value = 0;
    for (unsigned k = 0; k < 8; ++k) value |= std::to_integer<std::uint64_t>(data_[pos_++]) << (8U * k);
    return value;
}

std::span<const std::byte> ProtoReader::raw_length_delimited() {
    const std::size_t start = pos_;
    const std::uint64_t length = raw_varint();
    // Checked before anything is sliced or allocated: a corrupt length must not become a huge buffer.
    if (length > data_.size() - pos_) {
        throw DecodeError(
            fmt::format("length {} runs past the end of the data ({} bytes left)", length, data_.size() - pos_),
            base_ + start);
    }
    const auto bytes = data_.subspan(pos_, static_cast<std::size_t>(length));
    pos_ += bytes.size();
    return bytes;
}

bool ProtoReader::next_field() {
    if (pos_ >= data_.size()) return false;
    field_start_ = pos_;
    const std::uint64_t key = raw_varint();
    const std::uint64_t field = key >> 3U;
    const auto type = static_cast<unsigned>(key & 7U);
    if (field == 0 || field > kMaxFieldNumber) fail(fmt::format("invalid field number {}", field));
    if (type == 3 || type == 4)
        fail(fmt::format("field {} is a group (wire type {}), which ONNX never uses", field, type));
    if (type != 0 && type != 1 && type != 2 && type != 5)
        fail(fmt::format("field {}: invalid wire type {}", field, type));
    field_ = static_cast<std::uint32_t>(field);
    wire_type_ = static_cast<WireType>(type);
    return true;
}

void ProtoReader::expect(WireType type) const {
    if (wire_type_ != type) {
        fail(fmt::format("field {} has wire type {} ({}), expected {} ({})", field_, static_cast<int>(wire_type_),
                         wire_type_name(wire_type_), static_cast<int>(type), wire_type_name(type)));
    }
}

std::uint64_t ProtoReader::read_uint64() {
    expect(WireType::varint);
    return raw_varint();
}

float ProtoReader::read_float() {
    expect(WireType::fixed32);
    return std::bit_cast<float>(raw_fixed32());
}

double ProtoReader::read_double() {
    expect(WireType::fixed64);
    return std::bit_cast<double>(raw_fixed64());
}

std::span<const std::byte> ProtoReader::read_bytes() {
    expect(WireType::length_delimited);
    return raw_length_delimited();
}

std::string ProtoReader::read_string() {
    const auto bytes = read_bytes();
    return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

ProtoReader ProtoReader::read_message() {
    expect(WireType::length_delimited);
    const auto bytes = raw_length_delimited();
    return ProtoReader(bytes, base_ + pos_ - bytes.size());
}

void ProtoReader::skip() {
    switch (wire_type_) {
        case WireType::varint:
            raw_varint();
            break;
        case WireType::fixed64:
            raw_fixed64();
            break;
        case WireType::length_delimited:
            raw_length_delimited();
            break;
        case WireType::fixed32:
            raw_fixed32();
            break;
    }
}

bool ProtoReader::packed_payload(WireType element_type, std::span<const std::byte>& payload,
                                 std::size_t& payload_base) {
    if (wire_type_ == element_type) return false;
    expect(WireType::length_delimited);  // neither form: the error names the field
    payload = raw_length_delimited();
    payload_base = base_ + pos_ - payload.size();
    return true;
}

void ProtoReader::read_repeated(std::vector<std::uint64_t>& out) {
    std::span<const std::byte> payload;
    std::size_t payload_base = 0;
    if (!packed_payload(WireType::varint, payload, payload_base)) {
        out.push_back(raw_varint());
        return;
    }
    ProtoReader values(payload, payload_base);
    while (values.pos_ < payload.size()) out.push_back(values.raw_varint());
}

void ProtoReader::read_repeated(std::vector<std::int64_t>& out) {
    std::vector<std::uint64_t> raw;
    read_repeated(raw);
    for (const std::uint64_t v : raw) out.push_back(static_cast<std::int64_t>(v));
}

void ProtoReader::read_repeated(std::vector<std::int32_t>& out) {
    std::vector<std::uint64_t> raw;
    read_repeated(raw);
    for (const std::uint64_t v : raw) out.push_back(static_cast<std::int32_t>(v));
}

void ProtoReader::read_repeated(std::vector<float>& out) {
    std::span<const std::byte> payload;
    std::size_t payload_base = 0;
    if (!packed_payload(WireType::fixed32, payload, payload_base)) {
        out.push_back(std::bit_cast<float>(raw_fixed32()));
        return;
    }
    if (payload.size() % 4 != 0) fail(fmt::format("packed 32-bit field {}: {} bytes", field_, payload.size()));
    ProtoReader values(payload, payload_base);
    out.reserve(out.size() + payload.size() / 4);  // bounded: the bytes are there
    while (values.pos_ < payload.size()) out.push_back(std::bit_cast<float>(values.raw_fixed32()));
}

void ProtoReader::read_repeated(std::vector<double>& out) {
    std::span<const std::byte> payload;
    std::size_t payload_base = 0;
    if (!packed_payload(WireType::fixed64, payload, payload_base)) {
        out.push_back(std::bit_cast<double>(raw_fixed64()));
        return;
    }
    if (payload.size() % 8 != 0) fail(fmt::format("packed 64-bit field {}: {} bytes", field_, payload.size()));
    ProtoReader values(payload, payload_base);
    out.reserve(out.size() + payload.size() / 8);
    while (values.pos_ < payload.size()) out.push_back(std::bit_cast<double>(values.raw_fixed64()));
}

}  // namespace inferbench::models::pb
