// ModelProto decoding on top of ProtoReader. One parse_* function per message; each reads the
// fields it knows and skips the rest, so files from newer ONNX versions still read.
#include "models/onnx_reader.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include "core/error.hpp"
#include "models/onnx_external_data.hpp"
#include "models/onnx_tensor_reader.hpp"
#include "models/protobuf_reader.hpp"

namespace inferbench::models::onnx {

namespace {

using pb::DecodeError;
using pb::ProtoReader;

using detail::parse_tensor;
using detail::Unsupported;

// Field numbers, from onnx/onnx.proto.
struct ModelField {
    static constexpr std::uint32_t ir_version = 1, producer_name = 2, producer_version = 3, doc_string = 6, graph = 7,
                                   opset_import = 8, metadata_props = 14;
};
struct GraphField {
    static constexpr std::uint32_t node = 1, name = 2, initializer = 5, input = 11, output = 12, value_info = 13,
                                   sparse_initializer = 15;
};
struct NodeField {
    static constexpr std::uint32_t input = 1, output = 2, name = 3, op_type = 4, attribute = 5, domain = 7;
};
struct AttributeField {
    static constexpr std::uint32_t name = 1, f = 2, i = 3, s = 4, t = 5, g = 6, floats = 7, ints = 8, strings = 9,
                                   type = 20;
};
// ValueInfoProto, TypeProto(.Tensor), TensorShapeProto(.Dimension), OperatorSetIdProto and
// StringStringEntryProto: small enough to name inline.
constexpr std::uint32_t kValueInfoName = 1, kValueInfoType = 2, kTypeTensorType = 1, kTensorElemType = 1,
                        kTensorShape = 2, kShapeDim = 1, kDimValue = 1, kDimParam = 2, kOpsetDomain = 1,
                        kOpsetVersion = 2, kEntryKey = 1, kEntryValue = 2;

// AttributeProto.AttributeType values this reader keeps.
enum class AttributeType : std::int32_t {
    undefined = 0,
    float_value = 1,
    int_value = 2,
    string_value = 3,
    tensor = 4,
    graph = 5,
    floats = 6,
    ints = 7,
    strings = 8
};

// An AttributeProto's fields as read, before they become one OnnxAttributeValue.
struct AttributeFields {
    std::string name;
    std::int32_t declared_type = 0;
    std::optional<float> f;
    std::optional<std::int64_t> i;
    std::optional<std::string> s;
    std::optional<OnnxTensor> t;
    std::optional<ProtoReader> g;  // decoded once the type is known
    std::vector<float> floats;
    std::vector<std::int64_t> ints;
    std::vector<std::string> strings;
};

void read_attribute_field(ProtoReader& r, AttributeFields& a) {
    switch (r.field()) {
        case AttributeField::name:
            a.name = r.read_string();
            break;
        case AttributeField::f:
            a.f = r.read_float();
            break;
        case AttributeField::i:
            a.i = r.read_int64();
            break;
        case AttributeField::s:
            a.s = r.read_string();
            break;
        case AttributeField::t:
            a.t = parse_tensor(r.read_message());
            break;
        case AttributeField::g:
            a.g = r.read_message();
            break;
        case AttributeField::floats:
            r.read_repeated(a.floats);
            break;
        case AttributeField::ints:
            r.read_repeated(a.ints);
            break;
        case AttributeField::strings:
            a.strings.push_back(r.read_string());
            break;
        case AttributeField::type:
            a.declared_type = r.read_int32();
            break;
        default:
            r.skip();
    }
}

// The declared type, or (older producers leave `type` out) the one the set field implies.
AttributeType attribute_type(const AttributeFields& a) {
    if (a.declared_type != 0) return static_cast<AttributeType>(a.declared_type);
    if (a.f) return AttributeType::float_value;
    if (a.i) return AttributeType::int_value;
    if (a.s) return AttributeType::string_value;
    if (a.t) return AttributeType::tensor;
    if (a.g) return AttributeType::graph;
    if (!a.floats.empty()) return AttributeType::floats;
    if (!a.ints.empty()) return AttributeType::ints;
    if (!a.strings.empty()) return AttributeType::strings;
    return AttributeType::undefined;
}

// Control-flow graphs nest; a hostile file must not nest them until the stack runs out.
constexpr int kMaxGraphDepth = 32;

OnnxGraph parse_graph(ProtoReader r, int depth);

// Adds the attribute to `node` if OnnxAttributeValue can hold its kind (a graph goes to
// node.subgraphs). A scalar whose field is absent has protobuf's default value (0, 0.0, "").
void parse_attribute(ProtoReader r, OnnxNode& node, int depth) {
    const std::size_t start = r.offset();
    AttributeFields a;
    while (r.next_field()) read_attribute_field(r, a);
    OnnxAttributeValue value;
    switch (attribute_type(a)) {
        case AttributeType::graph:
            if (!a.g) throw DecodeError(fmt::format("attribute '{}' of type GRAPH has no graph", a.name), start);
            if (depth >= kMaxGraphDepth)
                throw DecodeError(fmt::format("graphs nested deeper than {} (attribute '{}')", kMaxGraphDepth, a.name),
                                  start);
            node.subgraphs.insert_or_assign(std::move(a.name),
                                            std::make_shared<const OnnxGraph>(parse_graph(*a.g, depth + 1)));
            return;
        case AttributeType::float_value:
            value = a.f.value_or(0.0F);
            break;
        case AttributeType::int_value:
            value = a.i.value_or(0);
            break;
        case AttributeType::string_value:
            value = std::move(a.s).value_or("");
            break;
        case AttributeType::tensor:
            if (!a.t) throw DecodeError(fmt::format("attribute '{}' of type TENSOR has no tensor", a.name), start);
            value = std::move(*a.t);
            break;
        case AttributeType::floats:
            value = std::move(a.floats);
            break;
        case AttributeType::ints:
            value = std::move(a.ints);
            break;
        case AttributeType::strings:
            value = std::move(a.strings);
            break;
        default:
            return;
    }
    node.attributes.insert_or_assign(std::move(a.name), std::move(value));
}

OnnxNode parse_node(ProtoReader r, int depth) {
    OnnxNode node;
    while (r.next_field()) {
        switch (r.field()) {
            case NodeField::input:
                node.inputs.push_back(r.read_string());
                break;
            case NodeField::output:
                node.outputs.push_back(r.read_string());
                break;
            case NodeField::name:
                node.name = r.read_string();
                break;
            case NodeField::op_type:
                node.op_type = r.read_string();
                break;
            case NodeField::domain:
                node.domain = r.read_string();
                break;
            case NodeField::attribute:
                parse_attribute(r.read_message(), node, depth);
                break;
            default:
                r.skip();
        }
    }
    return node;
}

void parse_shape(ProtoReader r, OnnxValueInfo& info) {
    info.has_shape = true;
    while (r.next_field()) {
        if (r.field() != kShapeDim) {
            r.skip();
            continue;
        }
        ProtoReader dim = r.read_message();
        OnnxDimension value = std::string();
        while (dim.next_field()) {
            if (dim.field() == kDimValue) {
                value = dim.read_int64();
            } else if (dim.field() == kDimParam) {
                value = dim.read_string();
            } else {
                dim.skip();
            }
        }
        info.dims.push_back(std::move(value));
    }
}

void parse_tensor_type(ProtoReader r, OnnxValueInfo& info) {
    while (r.next_field()) {
        if (r.field() == kTensorElemType) {
            info.elem_type = static_cast<DataType>(r.read_int32());
        } else if (r.field() == kTensorShape) {
            parse_shape(r.read_message(), info);
        } else {
            r.skip();
        }
    }
}

OnnxValueInfo parse_value_info(ProtoReader r) {
    OnnxValueInfo info;
    while (r.next_field()) {
        if (r.field() == kValueInfoName) {
            info.name = r.read_string();
        } else if (r.field() == kValueInfoType) {
            ProtoReader type = r.read_message();
            while (type.next_field()) {
                if (type.field() == kTypeTensorType) {
                    parse_tensor_type(type.read_message(), info);
                } else {
                    type.skip();  // sequences, maps, optionals: not tensors
                }
            }
        } else {
            r.skip();
        }
    }
    return info;
}

OnnxGraph parse_graph(ProtoReader r, int depth) {
    OnnxGraph g;
    while (r.next_field()) {
        switch (r.field()) {
            case GraphField::node:
                g.nodes.push_back(parse_node(r.read_message(), depth));
                break;
            case GraphField::name:
                g.name = r.read_string();
                break;
            case GraphField::initializer:
                g.initializers.push_back(parse_tensor(r.read_message()));
                break;
            case GraphField::input:
                g.inputs.push_back(parse_value_info(r.read_message()));
                break;
            case GraphField::output:
                g.outputs.push_back(parse_value_info(r.read_message()));
                break;
            case GraphField::value_info:
                g.value_info.push_back(parse_value_info(r.read_message()));
                break;
            case GraphField::sparse_initializer:
                throw Unsupported("the graph has sparse initializers, which inferbench does not read");
            default:
                r.skip();
        }
    }
    return g;
}

OpsetImport parse_opset(ProtoReader r) {
    OpsetImport opset;
    while (r.next_field()) {
        if (r.field() == kOpsetDomain) {
            opset.domain = r.read_string();
        } else if (r.field() == kOpsetVersion) {
            opset.version = r.read_int64();
        } else {
            r.skip();
        }
    }
    return opset;
}

void parse_metadata_entry(ProtoReader r, std::map<std::string, std::string, std::less<>>& metadata) {
    std::string key;
    std::string value;
    while (r.next_field()) {
        if (r.field() == kEntryKey) {
            key = r.read_string();
        } else if (r.field() == kEntryValue) {
            value = r.read_string();
        } else {
            r.skip();
        }
    }
    metadata.insert_or_assign(std::move(key), std::move(value));
}

OnnxModel parse_model(ProtoReader& r, std::size_t size) {
    if (size == 0) throw DecodeError("empty file", 0);
    OnnxModel m;
    bool has_graph = false;
    while (r.next_field()) {
        switch (r.field()) {
            case ModelField::ir_version:
                m.ir_version = r.read_int64();
                break;
            case ModelField::producer_name:
                m.producer = r.read_string();
                break;
            case ModelField::producer_version:
                m.producer_version = r.read_string();
                break;
            case ModelField::doc_string:
                m.doc_string = r.read_string();
                break;
            case ModelField::graph:
                m.graph = parse_graph(r.read_message(), 0);
                has_graph = true;
                break;
            case ModelField::opset_import:
                m.opset_imports.push_back(parse_opset(r.read_message()));
                break;
            case ModelField::metadata_props:
                parse_metadata_entry(r.read_message(), m.metadata);
                break;
            default:
                r.skip();
        }
    }
    // Any byte string decodes as *some* protobuf; these fields are what make it a model. Without
    // them a truncated file that ends between two top-level fields would pass.
    if (m.ir_version <= 0) throw DecodeError("no IR version (ModelProto.ir_version)", size);
    if (!has_graph) throw DecodeError("no graph (ModelProto.graph)", size);
    if (m.ir_version >= 3 && m.opset_imports.empty()) {
        throw DecodeError("no operator set import (ModelProto.opset_import)", size);
    }
    return m;
}

// An initializer's name, type and dims; its data fields are skipped without being decoded.
OnnxTensor initializer_header(ProtoReader r) {
    constexpr std::uint32_t kTensorDims = 1, kTensorDataType = 2, kTensorName = 8;
    OnnxTensor t;
    while (r.next_field()) {
        if (r.field() == kTensorName) t.name = r.read_string();
        else if (r.field() == kTensorDims) r.read_repeated(t.dims);
        else if (r.field() == kTensorDataType) t.data_type = static_cast<DataType>(r.read_int32());
        else r.skip();
    }
    return t;
}

OnnxGraphSignature parse_signature(ProtoReader r) {
    OnnxGraphSignature signature;
    while (r.next_field()) {
        if (r.field() == GraphField::input) signature.inputs.push_back(parse_value_info(r.read_message()));
        else if (r.field() == GraphField::output) signature.outputs.push_back(parse_value_info(r.read_message()));
        else if (r.field() == GraphField::initializer)
            signature.initializers.push_back(initializer_header(r.read_message()));
        else r.skip();  // nodes, value_info, and anything newer
    }
    std::vector<std::string> initializers;
    for (const OnnxTensor& t : signature.initializers) initializers.push_back(t.name);
    std::sort(initializers.begin(), initializers.end());
    std::erase_if(signature.inputs, [&](const OnnxValueInfo& input) {
        return std::binary_search(initializers.begin(), initializers.end(), input.name);
    });
    return signature;
}

OnnxGraphSignature parse_model_signature(ProtoReader& r, std::size_t size) {
    if (size == 0) throw DecodeError("empty file", 0);
    std::optional<OnnxGraphSignature> signature;
    std::map<std::string, std::string, std::less<>> metadata;
    std::int64_t ir_version = 0;
    while (r.next_field()) {
        if (r.field() == ModelField::ir_version) ir_version = r.read_int64();
        else if (r.field() == ModelField::graph) signature = parse_signature(r.read_message());
        else if (r.field() == ModelField::metadata_props) parse_metadata_entry(r.read_message(), metadata);
        else r.skip();
    }
    if (ir_version <= 0) throw DecodeError("no IR version (ModelProto.ir_version)", size);
    if (!signature) throw DecodeError("no graph (ModelProto.graph)", size);
    signature->metadata = std::move(metadata);
    return *signature;
}

// A read-only mapping of a whole file: pages are loaded only when the parser touches them.
class MappedFile {
public:
    explicit MappedFile(const std::filesystem::path& path) {
        const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            throw UserError(
                fmt::format("cannot open ONNX model {}: {}", path.string(), std::generic_category().message(errno)));
        }
        struct stat info {};
        const bool regular = fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
        size_ = regular ? static_cast<std::size_t>(info.st_size) : 0;
        if (size_ > 0) data_ = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
        close(fd);
        if (!regular) throw UserError(fmt::format("cannot read ONNX model {}: not a regular file", path.string()));
        if (data_ == MAP_FAILED) throw UserError(fmt::format("cannot read ONNX model {}", path.string()));
    }
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;
    ~MappedFile() {
        if (data_ != nullptr && data_ != MAP_FAILED) munmap(data_, size_);
    }
    std::span<const std::byte> bytes() const { return {static_cast<const std::byte*>(data_), size_}; }

private:
    void* data_ = nullptr;
    std::size_t size_ = 0;
};

template <typename Parse>
auto parse_as_user_error(std::span<const std::byte> data, std::string_view source_name, Parse parse) {
    try {
        ProtoReader reader(data);
        return parse(reader, data.size());
    } catch (const DecodeError& e) {
        throw UserError(fmt::format("{}: not an ONNX model: {} at byte {}", source_name, e.what(), e.offset()));
    } catch (const Unsupported& e) {
        throw UserError(fmt::format("{}: {}", source_name, e.what()));
    }
}

}  // namespace

std::int64_t OnnxModel::opset_version(std::string_view domain) const {
    const auto canonical = [](std::string_view d) { return d == "ai.onnx" ? std::string_view() : d; };
    for (const auto& opset : opset_imports) {
        if (canonical(opset.domain) == canonical(domain)) return opset.version;
    }
    return 0;
}

OnnxModel read_onnx(std::span<const std::byte> data, std::string_view source_name) {
    OnnxModel model = parse_as_user_error(data, source_name, parse_model);
    reject_external_data(model, source_name);
    return model;
}

OnnxGraphSignature read_onnx_signature(std::span<const std::byte> data, std::string_view source_name) {
    return parse_as_user_error(data, source_name, parse_model_signature);
}

OnnxGraphSignature read_onnx_signature(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw UserError(fmt::format("{}: is a directory, not an ONNX model", path.string()));
    const MappedFile file(path);
    return read_onnx_signature(file.bytes(), path.string());
}

OnnxModel read_onnx_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw UserError(fmt::format("{}: is a directory, not an ONNX model", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw UserError(
            fmt::format("cannot open ONNX model {}: {}", path.string(), std::generic_category().message(errno)));
    }
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    in.seekg(0, std::ios::beg);
    if (size < 0) throw UserError(fmt::format("cannot read ONNX model {}: not a regular file", path.string()));
    std::vector<std::byte> bytes(static_cast<std::size_t>(size));
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (!in) throw UserError(fmt::format("cannot read ONNX model {}", path.string()));
    OnnxModel model = parse_as_user_error(bytes, path.string(), parse_model);
    load_external_data(model, path.parent_path(), path.string());
    return model;
}

}  // namespace inferbench::models::onnx
