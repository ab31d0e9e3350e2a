#include "backends/tensorflow/tensorflow_config.hpp"

#include <string_view>

namespace inferbench {
namespace {

constexpr int kVarint = 0;
constexpr int kLengthDelimited = 2;

void put_varint(std::string& out, std::uint64_t value) {
    while (value >= 0x80) {
        out += static_cast<char>((value & 0x7f) | 0x80);
        value >>= 7;
    }
    out += static_cast<char>(value);
}

void put_key(std::string& out, int field, int wire_type) {
    put_varint(out, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
}

void put_int(std::string& out, int field, std::uint64_t value) {
    put_key(out, field, kVarint);
    put_varint(out, value);
}

void put_bytes(std::string& out, int field, std::string_view bytes) {
    put_key(out, field, kLengthDelimited);
    put_varint(out, bytes.size());
    out += bytes;
}

}  // namespace

std::string encode_config_proto(const SessionConfig& config) {
    std::string out;
    if (config.hide_gpus) {
        std::string entry;  // map<string, int32> entry: key = 1, value = 2
        put_bytes(entry, 1, "GPU");
        put_int(entry, 2, 0);
        put_bytes(out, 1, entry);
    }
    if (config.intra_op_threads > 0) put_int(out, 2, static_cast<std::uint64_t>(config.intra_op_threads));
    if (config.inter_op_threads > 0) put_int(out, 5, static_cast<std::uint64_t>(config.inter_op_threads));
    if (config.allow_growth || config.visible_gpu) {
        std::string gpu_options;
        if (config.allow_growth) put_int(gpu_options, 4, 1);
        if (config.visible_gpu) put_bytes(gpu_options, 5, std::to_string(*config.visible_gpu));
        put_bytes(out, 6, gpu_options);
    }
    put_int(out, 7, 1);
    return out;
}

}  // namespace inferbench
