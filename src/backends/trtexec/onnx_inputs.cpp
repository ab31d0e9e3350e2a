#include "backends/trtexec/onnx_inputs.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>

namespace inferbench::trtexec {
namespace {

// Field numbers of onnx.proto3 that lead to the input shapes.
constexpr std::uint32_t kModelGraph = 7;
constexpr std::uint32_t kGraphInitializer = 5, kGraphInput = 11;
constexpr std::uint32_t kTensorName = 8;
constexpr std::uint32_t kValueInfoName = 1, kValueInfoType = 2;
constexpr std::uint32_t kTypeTensor = 1;
constexpr std::uint32_t kTensorElemType = 1, kTensorShape = 2;
constexpr std::uint32_t kShapeDim = 1;
constexpr std::uint32_t kDimValue = 1;

// Walks the fields of one message; every length is checked against the bytes left.
class FieldReader {
public:
    FieldReader(std::span<const std::byte> data, std::size_t base) : data_(data), base_(base) {}

    bool next() {
        if (pos_ == data_.size()) return false;
        const std::uint64_t key = varint();
        field_ = static_cast<std::uint32_t>(key >> 3);
        wire_ = static_cast<unsigned>(key & 7u);
        return true;
    }
    std::uint32_t field() const { return field_; }

    std::uint64_t value() {
        if (wire_ != 0) fail("a varint field of another wire type");
        return varint();
    }
    FieldReader message() {
        const std::span<const std::byte> bytes = length_delimited();
        return FieldReader(bytes, base_ + pos_ - bytes.size());
    }
    std::string text() {
        const std::span<const std::byte> bytes = length_delimited();
        return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
    }
    void skip() {
        switch (wire_) {
            case 0: varint(); return;
            case 1: advance(8); return;
            case 2: length_delimited(); return;
            case 5: advance(4); return;
            default: fail(fmt::format("wire type {}", wire_));
        }
    }

private:
    std::uint64_t varint() {
        std::uint64_t result = 0;
        for (unsigned shift = 0; shift < 70; shift += 7) {
            if (pos_ == data_.size()) fail("a varint cut short");
            const auto byte = static_cast<std::uint8_t>(data_[pos_++]);
            result |= static_cast<std::uint64_t>(byte & 0x7fu) << shift;
            if ((byte & 0x80u) == 0) return result;
        }
        fail("a varint longer than 10 bytes");
    }
    std::span<const std::byte> length_delimited() {
        if (wire_ != 2) fail("a length-delimited field of another wire type");
        const std::uint64_t length = varint();
        if (length > data_.size() - pos_) fail("a length beyond the end of its message");
        const auto bytes = data_.subspan(pos_, static_cast<std::size_t>(length));
        pos_ += bytes.size();
        return bytes;
    }
    void advance(std::size_t n) {
        if (n > data_.size() - pos_) fail("a fixed-size field cut short");
        pos_ += n;
    }
    [[noreturn]] void fail(const std::string& what) const {
        throw std::runtime_error(fmt::format("not a valid ONNX model: {} at byte {}", what, base_ + pos_));
    }

    std::span<const std::byte> data_;
    std::size_t base_;
    std::size_t pos_ = 0;
    std::uint32_t field_ = 0;
    unsigned wire_ = 0;
};

void read_shape(FieldReader shape, OnnxInput& input) {
    while (shape.next()) {
        if (shape.field() != kShapeDim) {
            shape.skip();
            continue;
        }
        FieldReader dim = shape.message();
        std::int64_t size = -1;  // dim_param ("batch") or nothing: not fixed
        while (dim.next()) {
            if (dim.field() == kDimValue) size = static_cast<std::int64_t>(dim.value());
            else dim.skip();
        }
        input.dims.push_back(size > 0 ? size : -1);
    }
}

OnnxInput read_value_info(FieldReader info) {
    OnnxInput input;
    while (info.next()) {
        if (info.field() == kValueInfoName) {
            input.name = info.text();
        } else if (info.field() == kValueInfoType) {
            FieldReader type = info.message();
            while (type.next()) {
                if (type.field() != kTypeTensor) {
                    type.skip();
                    continue;
                }
                FieldReader tensor = type.message();
                while (tensor.next()) {
                    if (tensor.field() == kTensorElemType) input.elem_type = static_cast<std::int32_t>(tensor.value());
                    else if (tensor.field() == kTensorShape) read_shape(tensor.message(), input);
                    else tensor.skip();
                }
            }
        } else {
            info.skip();
        }
    }
    return input;
}

std::string initializer_name(FieldReader tensor) {
    while (tensor.next()) {
        if (tensor.field() == kTensorName) return tensor.text();
        tensor.skip();
    }
    return {};
}

}  // namespace

std::vector<OnnxInput> read_onnx_inputs(std::span<const std::byte> model) {
    FieldReader reader(model, 0);
    std::vector<OnnxInput> inputs;
    std::set<std::string, std::less<>> initializers;
    bool has_graph = false;
    while (reader.next()) {
        if (reader.field() != kModelGraph) {
            reader.skip();
            continue;
        }
        has_graph = true;
        FieldReader graph = reader.message();
        while (graph.next()) {
            if (graph.field() == kGraphInput) inputs.push_back(read_value_info(graph.message()));
            else if (graph.field() == kGraphInitializer) initializers.insert(initializer_name(graph.message()));
            else graph.skip();
        }
    }
    if (!has_graph) throw std::runtime_error("not a valid ONNX model: no graph");
    std::erase_if(inputs, [&](const OnnxInput& input) { return initializers.contains(input.name); });
    return inputs;
}

}  // namespace inferbench::trtexec
