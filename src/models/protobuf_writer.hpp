// A minimal protocol-buffers wire-format encoder: just enough to write ONNX files without linking
// libprotobuf (whose version would then have to match the one every framework links).
// Reference: https://protobuf.dev/programming-guides/encoding/
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>

namespace inferbench::models::pb {

enum class WireType : std::uint8_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

// Appends `value` as a base-128 varint (1 to 10 bytes).
void append_varint(std::string& out, std::uint64_t value);
std::size_t varint_size(std::uint64_t value);

// Appends the 4 bytes of `value`, least significant first (protobuf is little-endian on the wire).
void append_fixed32(std::string& out, std::uint32_t value);
// Appends IEEE-754 floats little-endian, whatever the host's byte order.
void append_floats_le(std::string& out, std::span<const float> values);

// Encodes one message into an owned byte string. Nested messages are encoded into their own
// writer first and appended with write_message(), which prefixes the length. For payloads too
// large to copy (tensor data), write_length_header() emits only the tag and length so the caller
// can stream the bytes itself.
class ProtoWriter {
public:
    void write_tag(std::uint32_t field, WireType type);

    void write_varint(std::uint32_t field, std::uint64_t value);
    // int32 and int64 negatives are sign-extended to 64 bits: always 10 bytes (no zigzag, which
    // only sint32/sint64 use).
    void write_int64(std::uint32_t field, std::int64_t value);
    void write_int32(std::uint32_t field, std::int32_t value);
    void write_bool(std::uint32_t field, bool value);

    void write_fixed32(std::uint32_t field, std::uint32_t value);
    void write_float(std::uint32_t field, float value);

    void write_bytes(std::uint32_t field, std::string_view bytes);
    void write_string(std::uint32_t field, std::string_view text) { write_bytes(field, text); }
    void write_message(std::uint32_t field, const ProtoWriter& message);
    void write_length_header(std::uint32_t field, std::size_t length);

    // Packed repeated fields: one length-delimited record holding all values.
    void write_packed_int64(std::uint32_t field, std::span<const std::int64_t> values);
    void write_packed_float(std::uint32_t field, std::span<const float> values);

    // Appends fields already encoded (a field copied byte for byte from another message).
    void write_raw(std::span<const std::byte> encoded);

    const std::string& bytes() const { return buffer_; }
    std::size_t size() const { return buffer_.size(); }
    std::string take() { return std::move(buffer_); }

private:
    std::string buffer_;
};

}  // namespace inferbench::models::pb
