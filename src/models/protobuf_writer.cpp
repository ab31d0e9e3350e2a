#include "models/protobuf_writer.hpp"

#include <bit>

namespace inferbench::models::pb {

void append_varint(std::string& out, std::uint64_t value) {
    while (value >= 0x80U) {
        out.push_back(static_cast<char>((value & 0x7FU) | 0x80U));
        value >>= 7U;
    }
    out.push_back(static_cast<char>(value));
}

std::size_t varint_size(std::uint64_t value) {
    std::size_t size = 1;
    while (value >= 0x80U) {
        value >>= 7U;
        ++size;
    }
    return size;
}

void append_fixed32(std::string& out, std::uint32_t value) {
    for (int shift = 0; shift < 32; shift += 8) {
        out.push_back(static_cast<char>((value >> shift) & 0xFFU));
    }
}

void append_floats_le(std::string& out, std::span<const float> values) {
    out.reserve(out.size() + values.size_bytes());
    for (const float v : values) {
        append_fixed32(out, std::bit_cast<std::uint32_t>(v));
    }
}

void ProtoWriter::write_tag(std::uint32_t field, WireType type) {
    append_varint(buffer_, (std::uint64_t{field} << 3U) | static_cast<std::uint64_t>(type));
}

void ProtoWriter::write_varint(std::uint32_t field, std::uint64_t value) {
    write_tag(field, WireType::varint);
    append_varint(buffer_, value);
}

void ProtoWriter::write_int64(std::uint32_t field, std::int64_t value) {
    write_varint(field, static_cast<std::uint64_t>(value));
}

void ProtoWriter::write_int32(std::uint32_t field, std::int32_t value) {
    // Widening to int64 first is what sign-extends negatives, as protobuf requires for int32.
    write_int64(field, std::int64_t{value});
}

void ProtoWriter::write_bool(std::uint32_t field, bool value) { write_varint(field, value ? 1U : 0U); }

void ProtoWriter::write_fixed32(std::uint32_t field, std::uint32_t value) {
    write_tag(field, WireType::fixed32);
    append_fixed32(buffer_, value);
}

void ProtoWriter::write_float(std::uint32_t field, float value) {
    write_fixed32(field, std::bit_cast<std::uint32_t>(value));
}

void ProtoWriter::write_length_header(std::uint32_t field, std::size_t length) {
    write_tag(field, WireType::length_delimited);
    append_varint(buffer_, length);
}

void ProtoWriter::write_bytes(std::uint32_t field, std::string_view bytes) {
    write_length_header(field, bytes.size());
    buffer_.append(bytes);
}

void ProtoWriter::write_message(std::uint32_t field, const ProtoWriter& message) {
    write_bytes(field, message.bytes());
}

void ProtoWriter::write_packed_int64(std::uint32_t field, std::span<const std::int64_t> values) {
    std::string payload;
    for (const std::int64_t v : values) {
        append_varint(payload, static_cast<std::uint64_t>(v));
    }
    write_bytes(field, payload);
}

void ProtoWriter::write_packed_float(std::uint32_t field, std::span<const float> values) {
    std::string payload;
    append_floats_le(payload, values);
    write_bytes(field, payload);
}

void ProtoWriter::write_raw(std::span<const std::byte> encoded) {
    buffer_.append(reinterpret_cast<const char*>(encoded.data()), encoded.size());
}

}  // namespace inferbench::models::pb
