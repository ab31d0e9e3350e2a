// A minimal protocol-buffers wire-format decoder, the counterpart of protobuf_writer.hpp: enough to
// read ONNX files without libprotobuf. Built for untrusted input: every length is checked against
// the bytes that remain before anything is allocated, varints are at most 10 bytes, groups (wire
// types 3 and 4, unused by ONNX) are rejected, and every failure is a DecodeError carrying the
// byte offset in the whole buffer, never a crash.
// Reference: https://protobuf.dev/programming-guides/encoding/
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/protobuf_writer.hpp"

namespace inferbench::models::pb {

// Malformed input. `offset` is where the offending item starts, counted from the start of the
// outermost buffer (nested readers keep counting from there).
class DecodeError : public std::runtime_error {
public:
    DecodeError(const std::string& what, std::size_t offset) : std::runtime_error(what), offset_(offset) {}
    std::size_t offset() const { return offset_; }

private:
    std::size_t offset_;
};

// Reads one message's fields in order:
//   while (reader.next_field()) switch (reader.field()) { case 1: x = reader.read_int64(); ... default: reader.skip();
//   }
// Each read_* checks the field's wire type and throws DecodeError on a mismatch, so a known field
// number carrying the wrong kind of data is an error, not a misread.
class ProtoReader {
public:
    // `base_offset`: where `data` starts in the outermost buffer, for error offsets.
    explicit ProtoReader(std::span<const std::byte> data, std::size_t base_offset = 0)
        : data_(data), base_(base_offset) {}

    // Reads the next key; false at the end of the message.
    bool next_field();
    std::uint32_t field() const { return field_; }
    WireType wire_type() const { return wire_type_; }
    // Where the current field's key starts, in the outermost buffer.
    std::size_t field_offset() const { return base_ + field_start_; }
    // Where the reader is now, in the outermost buffer.
    std::size_t offset() const { return base_ + pos_; }

    // Scalars of the current field. int32 and enums are read as int64 and narrowed, as protobuf does.
    std::uint64_t read_uint64();
    std::int64_t read_int64() { return static_cast<std::int64_t>(read_uint64()); }
    std::int32_t read_int32() { return static_cast<std::int32_t>(read_uint64()); }
    float read_float();
    double read_double();
    std::span<const std::byte> read_bytes();
    std::string read_string();
    // The current field as an embedded message, read by its own reader.
    ProtoReader read_message();
    // Skips the current field's value, whatever its (valid) wire type.
    void skip();

    // Repeated scalars, appended to `out`: accepts both the packed form (one length-delimited
    // record) and the unpacked one (one record per value), as protobuf parsers must.
    void read_repeated(std::vector<std::int64_t>& out);
    void read_repeated(std::vector<std::uint64_t>& out);
    void read_repeated(std::vector<std::int32_t>& out);
    void read_repeated(std::vector<float>& out);
    void read_repeated(std::vector<double>& out);

    // Throws DecodeError("<what>", offset of the current field).
    [[noreturn]] void fail(const std::string& what) const;

private:
    std::uint64_t raw_varint();
    std::uint32_t raw_fixed32();
    std::uint64_t raw_fixed64();
    std::span<const std::byte> raw_length_delimited();
    void expect(WireType type) const;
    // For repeated fields: the packed payload, or an empty span (and false) if unpacked.
    bool packed_payload(WireType element_type, std::span<const std::byte>& payload, std::size_t& payload_base);

    std::span<const std::byte> data_;
    std::size_t base_;
    std::size_t pos_ = 0;
    std::size_t field_start_ = 0;
    std::uint32_t field_ = 0;
    WireType wire_type_ = WireType::varint;
};

}  // namespace inferbench::models::pb
