// Golden bytes, mostly from the examples in https://protobuf.dev/programming-guides/encoding/.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "models/protobuf_writer.hpp"

namespace inferbench::models::pb {
namespace {

std::string bytes(std::initializer_list<unsigned> values) {
    std::string out;
    for (const unsigned v : values) out.push_back(static_cast<char>(v));
    return out;
}

std::string varint(std::uint64_t v) {
    std::string out;
    append_varint(out, v);
    return out;
}

TEST(ProtobufWriter, Varints) {
    EXPECT_EQ(varint(0), bytes({0x00}));
    EXPECT_EQ(varint(1), bytes({0x01}));
    EXPECT_EQ(varint(127), bytes({0x7F}));
    EXPECT_EQ(varint(128), bytes({0x80, 0x01}));
    EXPECT_EQ(varint(150), bytes({0x96, 0x01}));
    EXPECT_EQ(varint(300), bytes({0xAC, 0x02}));
    EXPECT_EQ(varint(std::numeric_limits<std::uint64_t>::max()),
              bytes({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
}

TEST(ProtobufWriter, VarintSizeMatchesEncoding) {
    for (const std::uint64_t v : {0ULL, 127ULL, 128ULL, 16383ULL, 16384ULL, 1ULL << 35U, ~0ULL}) {
        EXPECT_EQ(varint_size(v), varint(v).size()) << v;
    }
}

TEST(ProtobufWriter, VarintField) {
    ProtoWriter w;
    w.write_varint(1, 150);
    EXPECT_EQ(w.bytes(), bytes({0x08, 0x96, 0x01}));
}

TEST(ProtobufWriter, NegativeIntegersAreTenBytesTwosComplement) {
    ProtoWriter w64;
    w64.write_int64(1, -1);
    EXPECT_EQ(w64.bytes(), bytes({0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
    ProtoWriter w32;
    w32.write_int32(1, -2);  // sign-extended, not 5 bytes
    EXPECT_EQ(w32.bytes(), bytes({0x08, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01}));
    ProtoWriter min;
    min.write_int64(1, std::numeric_limits<std::int64_t>::min());
    EXPECT_EQ(min.bytes(), bytes({0x08, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}));
}

TEST(ProtobufWriter, LargeFieldNumbersTakeLongerTags) {
    ProtoWriter w;
    w.write_varint(20, 7);  // AttributeProto.type: (20 << 3) | 0 = 160
    EXPECT_EQ(w.bytes(), bytes({0xA0, 0x01, 0x07}));
}

TEST(ProtobufWriter, Fixed32AndFloatAreLittleEndian) {
    ProtoWriter w;
    w.write_fixed32(1, 0x12345678U);
    w.write_float(2, 1.0F);
    w.write_float(2, -2.5F);
    EXPECT_EQ(w.bytes(), bytes({0x0D, 0x78, 0x56, 0x34, 0x12, 0x15, 0x00, 0x00, 0x80, 0x3F, 0x15, 0x00, 0x00,
                                0x20, 0xC0}));
}

TEST(ProtobufWriter, Strings) {
    ProtoWriter w;
    w.write_string(2, "testing");
    w.write_string(3, "");
    EXPECT_EQ(w.bytes(), bytes({0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g', 0x1A, 0x00}));
}

TEST(ProtobufWriter, NestedMessage) {
    ProtoWriter inner;
    inner.write_varint(1, 150);
    ProtoWriter outer;
    outer.write_message(3, inner);
    EXPECT_EQ(outer.bytes(), bytes({0x1A, 0x03, 0x08, 0x96, 0x01}));
}

TEST(ProtobufWriter, NestedMessageLongerThan127BytesHasTwoByteLength) {
    ProtoWriter inner;
    inner.write_string(1, std::string(197, 'x'));  // tag 1 + length 2 + 197 = 200 bytes
    ASSERT_EQ(inner.size(), 200U);
    ProtoWriter middle;
    middle.write_message(2, inner);
    ProtoWriter outer;
    outer.write_message(1, middle);
    const std::string& out = outer.bytes();
    ASSERT_EQ(out.size(), 3U + 3U + 3U + 197U);
    EXPECT_EQ(out.substr(0, 8), bytes({0x0A, 0xCB, 0x01, 0x12, 0xC8, 0x01, 0x0A, 0xC5}));
    EXPECT_EQ(out.substr(8, 1), bytes({0x01}));
}

TEST(ProtobufWriter, LengthHeaderThenStreamedPayloadEqualsWriteBytes) {
    ProtoWriter streamed;
    streamed.write_length_header(9, 4);
    std::string result = streamed.bytes() + "abcd";
    ProtoWriter whole;
    whole.write_bytes(9, "abcd");
    EXPECT_EQ(result, whole.bytes());
}

TEST(ProtobufWriter, PackedRepeated) {
    ProtoWriter w;
    const std::vector<std::int64_t> ints = {3, 270, 86942};
    w.write_packed_int64(6, ints);
    EXPECT_EQ(w.bytes(), bytes({0x32, 0x06, 0x03, 0x8E, 0x02, 0x9E, 0xA7, 0x05}));
    ProtoWriter f;
    const std::vector<float> floats = {1.0F};
    f.write_packed_float(7, floats);
    EXPECT_EQ(f.bytes(), bytes({0x3A, 0x04, 0x00, 0x00, 0x80, 0x3F}));
}

TEST(ProtobufWriter, BoolAndTake) {
    ProtoWriter w;
    w.write_bool(1, true);
    w.write_bool(2, false);
    EXPECT_EQ(w.take(), bytes({0x08, 0x01, 0x10, 0x00}));
}

}  // namespace
}  // namespace inferbench::models::pb
