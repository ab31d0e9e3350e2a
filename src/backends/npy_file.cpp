#include "backends/npy_file.hpp"

#include <charconv>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/file_io.hpp"
#include "core/tensor_size.hpp"

namespace inferbench {
namespace {

constexpr std::pair<std::string_view, DType> kDescriptors[] = {
    {"<f4", DType::f32}, {"<f2", DType::f16}, {"<f8", DType::f64}, {"|i1", DType::i8}, {"|u1", DType::u8},
    {"<i4", DType::i32}, {"<i8", DType::i64}, {"|b1", DType::boolean}};

// The text after `key': ` in the header dict, up to the end of its value.
std::string_view header_value(std::string_view header, std::string_view key) {
    const std::string quoted = fmt::format("'{}':", key);
    const auto at = header.find(quoted);
    if (at == std::string_view::npos) return {};
    std::string_view rest = header.substr(at + quoted.size());
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    const char close = rest.empty() ? '\0' : (rest.front() == '(' ? ')' : (rest.front() == '\'' ? '\'' : ','));
    const auto end = rest.find(close, 1);
    return end == std::string_view::npos ? rest : rest.substr(0, end + 1);
}

std::vector<std::int64_t> parse_shape(std::string_view text, const std::string& file) {
    std::vector<std::int64_t> dims;
    if (text.size() < 2 || text.front() != '(') throw UserError(fmt::format("{}: .npy header has no shape", file));
    text = text.substr(1, text.size() - 2);
    while (!text.empty()) {
        while (!text.empty() && (text.front() == ' ' || text.front() == ',')) text.remove_prefix(1);
        if (text.empty()) break;
        std::int64_t d = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
        if (ec != std::errc() || d < 0) throw UserError(fmt::format("{}: .npy header has a bad shape", file));
        dims.push_back(d);
        text.remove_prefix(static_cast<std::size_t>(end - text.data()));
    }
    return dims;
}

std::string_view descriptor(DType dtype) {
    if (dtype == DType::bf16) return "<u2";
    for (const auto& [text, known] : kDescriptors)
        if (known == dtype) return text;
    return "|u1";
}

}  // namespace

void write_npy_file(const std::filesystem::path& path, const HostTensor& tensor) {
    std::string shape;
    for (const auto d : tensor.info.shape) shape += fmt::format("{},", d);
    if (tensor.info.shape.size() > 1) shape.pop_back();  // (3,) keeps its comma, (2,3) has none at the end
    std::string header =
        fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descriptor(tensor.info.dtype), shape);
    // Magic (6) + version (2) + length (2) + header + '\n', padded to a multiple of 64.
    const std::size_t unpadded = 10 + header.size() + 1;
    header.append((64 - unpadded % 64) % 64, ' ');
    header.push_back('\n');
    std::string bytes = "\x93NUMPY";
    bytes.push_back('\x01');
    bytes.push_back('\x00');
    bytes.push_back(static_cast<char>(header.size() & 0xFFU));
    bytes.push_back(static_cast<char>((header.size() >> 8U) & 0xFFU));
    bytes += header;
    bytes.append(reinterpret_cast<const char*>(tensor.data.data()), tensor.data.size());
    write_file_atomically(path, bytes);
}

HostTensor read_npy_file(const std::filesystem::path& path, const std::string& name) {
    return parse_npy(read_regular_file(path), path.string(), name);
}

HostTensor parse_npy(std::string_view bytes, const std::string& file, const std::string& name) {
    constexpr std::string_view kMagic = "\x93NUMPY";
    if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic)
        throw UserError(fmt::format("{}: not a NumPy .npy file (save it with numpy.save)", file));
    const auto major = static_cast<unsigned char>(bytes[6]);
    std::size_t header_length = 0;
    std::size_t offset = 0;
    if (major == 1) {
        header_length = static_cast<unsigned char>(bytes[8]) | (static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8U);
        offset = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw UserError(fmt::format("{}: truncated .npy header", file));
        for (std::size_t k = 0; k < 4; ++k)
            header_length |= static_cast<std::size_t>(static_cast<unsigned char>(bytes[8 + k])) << (8U * k);
        offset = 12;
    } else {
        throw UserError(fmt::format("{}: .npy format version {} is not one inferbench reads (1 to 3)", file, major));
    }
    if (bytes.size() < offset + header_length) throw UserError(fmt::format("{}: truncated .npy header", file));
    const std::string_view header(bytes.data() + offset, header_length);
    if (header_value(header, "fortran_order").starts_with("True"))
        throw UserError(fmt::format("{}: the array is in Fortran order; save numpy.ascontiguousarray(a)", file));
    const std::string_view descr = header_value(header, "descr");
    HostTensor t;
    t.info.name = name;
    bool known = false;
    for (const auto& [text, dtype] : kDescriptors) {
        if (descr == fmt::format("'{}'", text)) {
            t.info.dtype = dtype;
            known = true;
        }
    }
    if (!known)
        throw UserError(fmt::format("{}: element type {} is not one inferbench feeds (little-endian float32, float16, "
                                    "float64, int8, uint8, int32, int64 or bool)",
                                    file, descr));
    t.info.shape = parse_shape(header_value(header, "shape"), file);
    const std::size_t size = byte_size_or_throw(fmt::format("the array in {}", file), t.info.shape, size_of(t.info.dtype));
    const std::size_t data_offset = offset + header_length;
    if (bytes.size() - data_offset != size)
        throw UserError(fmt::format("{}: holds {} bytes of data, but its shape and type take {}", file,
                                    bytes.size() - data_offset, size));
    t.data.resize(size);
    std::memcpy(t.data.data(), bytes.data() + data_offset, t.data.size());
    return t;
}

}  // namespace inferbench
